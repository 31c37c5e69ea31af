# The compiled core (native/src/lib.rs): one submodule per kernel family, each with the
# names and signatures of its numpy twin neardup._kernels.<family>.
from types import ModuleType

__version__: str

def __getattr__(name: str) -> ModuleType: ...
