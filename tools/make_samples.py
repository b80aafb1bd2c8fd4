"""Write the bundled sample datasets in resources/samples/ (deterministic; run it to regenerate).

The samples are small, hand-written phrase sets combined into a few hundred English and Chinese
rows per task: enough for a quick start and for tests, not for a useful model.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "resources" / "samples"

SUBJECTS_EN = [
    "The battery",
    "This phone",
    "The hotel room",
    "The delivery",
    "Customer service",
    "The food",
    "The screen",
    "This laptop",
    "The staff",
    "The movie",
    "The headphones",
    "The app",
    "The coffee",
    "The packaging",
    "The camera",
]
POSITIVE_EN = [
    "is excellent",
    "works perfectly",
    "exceeded my expectations",
    "is worth every penny",
    "made my day",
    "is fast and reliable",
    "is really impressive",
    "was a pleasant surprise",
    "is the best I have tried",
    "feels great",
]
NEGATIVE_EN = [
    "broke after two days",
    "was a total disappointment",
    "is slow and annoying",
    "is not worth the money",
    "stopped working quickly",
    "was rude and unhelpful",
    "is the worst I have tried",
    "feels cheap",
    "arrived damaged",
    "keeps crashing",
]
SUBJECTS_ZH = [
    "电池",
    "这款手机",
    "酒店房间",
    "快递",
    "客服",
    "饭菜",
    "屏幕",
    "这台笔记本",
    "服务员",
    "这部电影",
    "耳机",
    "这个应用",
    "咖啡",
    "包装",
    "相机",
]
POSITIVE_ZH = [
    "非常好用",
    "完全超出预期",
    "物超所值",
    "让我很满意",
    "又快又稳定",
    "真的很棒",
    "质量很好",
    "值得推荐",
    "体验非常好",
    "让人惊喜",
]
NEGATIVE_ZH = [
    "两天就坏了",
    "太让人失望了",
    "又慢又烦人",
    "根本不值这个价",
    "很快就不能用了",
    "态度很差",
    "是我用过最差的",
    "做工粗糙",
    "到货就损坏了",
    "总是闪退",
]

FRUITS = [
    ("apples", "苹果"),
    ("bananas", "香蕉"),
    ("oranges", "橙子"),
    ("grapes", "葡萄"),
    ("tea", "茶"),
    ("coffee", "咖啡"),
    ("rice", "米饭"),
    ("noodles", "面条"),
    ("music", "音乐"),
    ("books", "书"),
    ("cats", "猫"),
    ("dogs", "狗"),
]
PEOPLE = [
    ("I", "我"),
    ("We", "我们"),
    ("They", "他们"),
    ("My friend", "我的朋友"),
    ("My teacher", "我的老师"),
    ("Her brother", "她的哥哥"),
]
VERBS = [
    ("like", "likes", "喜欢"),
    ("love", "loves", "爱"),
    ("want", "wants", "想要"),
    ("do not like", "does not like", "不喜欢"),
]
CAPITALS = [
    ("France", "Paris", "法国", "巴黎"),
    ("Japan", "Tokyo", "日本", "东京"),
    ("China", "Beijing", "中国", "北京"),
    ("Italy", "Rome", "意大利", "罗马"),
    ("Germany", "Berlin", "德国", "柏林"),
    ("Spain", "Madrid", "西班牙", "马德里"),
    ("Canada", "Ottawa", "加拿大", "渥太华"),
    ("Egypt", "Cairo", "埃及", "开罗"),
    ("Kenya", "Nairobi", "肯尼亚", "内罗毕"),
    ("Brazil", "Brasília", "巴西", "巴西利亚"),
]


def reviews(rng: random.Random) -> list[dict[str, str]]:
    rows = []
    for subjects, pos, neg, sep in (
        (SUBJECTS_EN, POSITIVE_EN, NEGATIVE_EN, " "),
        (SUBJECTS_ZH, POSITIVE_ZH, NEGATIVE_ZH, ""),
    ):
        for subject in subjects:
            for label, phrases in (("positive", pos), ("negative", neg)):
                for phrase in rng.sample(phrases, 5):
                    end = "." if sep else "。"
                    rows.append({"text": f"{subject}{sep}{phrase}{end}", "label": label})
    rng.shuffle(rows)
    return rows


def translations() -> list[dict[str, str]]:
    rows = []
    for en_p, zh_p in PEOPLE:
        for base, third, zh_v in VERBS:
            verb = base if en_p in ("I", "We", "They") else third
            for en_f, zh_f in FRUITS:
                rows.append({"source": f"{en_p} {verb} {en_f}.", "target": f"{zh_p}{zh_v}{zh_f}。"})
    return rows


def instructions(rng: random.Random) -> list[dict[str, str]]:
    rows = []
    for en, cap, zh, zh_cap in CAPITALS:
        rows.append(
            {
                "instruction": f"What is the capital of {en}?",
                "input": "",
                "output": f"The capital of {en} is {cap}.",
            }
        )
        rows.append({"instruction": f"{zh}的首都是哪里？", "input": "", "output": f"{zh}的首都是{zh_cap}。"})
    for _ in range(60):
        a, b = rng.randint(2, 60), rng.randint(2, 40)
        rows.append(
            {
                "instruction": "Add the two numbers.",
                "input": f"{a} and {b}",
                "output": f"{a} + {b} = {a + b}.",
            }
        )
        c, d = rng.randint(2, 60), rng.randint(2, 40)
        rows.append(
            {
                "instruction": "计算两个数的和。",
                "input": f"{c} 和 {d}",
                "output": f"{c} 加 {d} 等于 {c + d}。",
            }
        )
    for pair in rng.sample(translations(), 60):
        rows.append(
            {
                "instruction": "Translate the sentence into Chinese.",
                "input": pair["source"],
                "output": pair["target"],
            }
        )
    rng.shuffle(rows)
    return rows


def chats(rng: random.Random) -> list[dict[str, object]]:
    rows = []
    for en, cap, zh, zh_cap in CAPITALS:
        rows.append(
            {
                "messages": [
                    {"role": "system", "content": "You are a concise geography tutor."},
                    {"role": "user", "content": f"Which city is the capital of {en}?"},
                    {"role": "assistant", "content": f"{cap}."},
                    {"role": "user", "content": "And in Chinese?"},
                    {"role": "assistant", "content": f"{zh}的首都是{zh_cap}。"},
                ]
            }
        )
    for pair in rng.sample(translations(), 90):
        rows.append(
            {
                "messages": [
                    {"role": "user", "content": f"Please translate: {pair['source']}"},
                    {"role": "assistant", "content": pair["target"]},
                ]
            }
        )
    rng.shuffle(rows)
    return rows


def main() -> None:
    rng = random.Random(20261130)
    OUT.mkdir(parents=True, exist_ok=True)
    # English reviews go with the bundled English model; the Chinese ones are a file of their own
    # for a model that reads Chinese (bert-base-chinese): the English model's tokenizer turns about
    # three quarters of Chinese characters into [UNK], and would learn nothing from them.
    rows = reviews(rng)
    for name, keep in (("reviews.csv", str.isascii), ("reviews-zh.csv", lambda text: not text.isascii())):
        with open(OUT / name, "w", encoding="utf-8", newline="") as fh:
            writer = csv.DictWriter(fh, ["text", "label"])
            writer.writeheader()
            writer.writerows(r for r in rows if keep(r["text"]))
    with open(OUT / "translation.tsv", "w", encoding="utf-8", newline="") as fh:
        fh.write("source\ttarget\n")
        fh.writelines(f"{r['source']}\t{r['target']}\n" for r in translations())
    for name, rows in (("instructions.jsonl", instructions(rng)), ("chat.jsonl", chats(rng))):
        with open(OUT / name, "w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


if __name__ == "__main__":
    main()
