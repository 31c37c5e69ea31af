"""Chinese and Japanese near-duplicates are found with the default settings."""

from __future__ import annotations

import neardup
from neardup import MinHasher

ZH_A = (
    "新华社北京三月五日电，国务院总理今天在人民大会堂作政府工作报告。报告指出，过去一年我国经济"
    "保持平稳增长，城镇新增就业一千二百万人，居民收入稳步提高。今年将继续扩大内需，推动科技创新，"
    "加强生态环境保护，促进区域协调发展，并进一步深化教育和医疗卫生体制改革。政府将继续支持"
    "中小企业发展，完善社会保障体系，提高基本养老金和城乡居民医疗保险补助标准，保障粮食安全。"
)
ZH_B = ZH_A.replace("推动科技创新", "加快发展现代服务业")
ZH_OTHER = (
    "本周末全市将迎来大范围降雨天气，气象台提醒市民出行注意安全。郊区部分路段可能出现积水，"
    "学校春游活动已经推迟到下个月举行，公园管理处也暂停了部分户外项目。"
)
JA_A = (
    "今日は東京で新しい美術館の開館式が行われ、多くの市民が訪れました。館長は、地域の若い芸術家の"
    "作品を積極的に紹介し、子どもたちが気軽に芸術に触れられる場所にしたいと話しました。"
    "来月からは週末に無料のワークショップも開かれる予定です。また、館内のカフェでは地元の農家が"
    "育てた野菜を使った料理が提供され、展示と合わせて地域の魅力を伝える取り組みが始まります。"
)
JA_B = JA_A.replace("多くの市民が訪れました", "大勢の人々が集まりました")
JA_OTHER = (
    "北海道では今週、記録的な大雪が観測され、鉄道や高速道路の一部が運休や通行止めになりました。"
    "気象庁は、引き続き雪崩や路面の凍結に注意するよう呼びかけています。"
)


def test_one_phrase_edit_keeps_a_high_jaccard() -> None:
    h = MinHasher()
    assert h.sketch(ZH_A).jaccard(h.sketch(ZH_B)) > 0.8
    assert h.sketch(JA_A).jaccard(h.sketch(JA_B)) > 0.8
    assert h.sketch(ZH_A).jaccard(h.sketch(ZH_OTHER)) < 0.1


def test_dedup_finds_chinese_and_japanese_pairs() -> None:
    docs = [("zh-a", ZH_A), ("zh-other", ZH_OTHER), ("ja-a", JA_A), ("zh-b", ZH_B)]
    docs += [("ja-other", JA_OTHER), ("ja-b", JA_B)]
    result = neardup.dedup(docs, method="minhash")
    clusters = sorted(sorted(c.members) for c in result.clusters if len(c.members) > 1)
    assert clusters == [["ja-a", "ja-b"], ["zh-a", "zh-b"]]
