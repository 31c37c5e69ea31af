//! The JSONL scanner: text and id fields out of JSON lines, exactly where `json.loads` agrees.

pub mod core;
pub mod py;
