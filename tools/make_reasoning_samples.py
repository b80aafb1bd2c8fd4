"""Write the reasoning samples (task ``grpo``) in resources/samples/: checkable prompts with their answers.

- ``reasoning.jsonl`` / ``reasoning-zh.jsonl``: arithmetic word problems in English / Chinese (one or two
  steps: add, take away, share, times), the answer a whole number;
- ``sentiment-words.jsonl``: a review in English or Chinese, the answer ``positive`` or ``negative`` in
  words (a label the answer reward checks).

Deterministic (a fixed seed): run it to regenerate. Small on purpose: enough for the demo and the
tests, not to teach a model arithmetic.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "resources" / "samples"

PEOPLE_EN = ["Tom", "Lily", "Sam", "Mia", "Ben", "Ana", "Leo", "Zoe"]
THINGS_EN = ["apples", "books", "stickers", "pencils", "marbles", "cookies", "stamps", "shells"]
PEOPLE_ZH = ["小明", "小红", "小刚", "小丽", "阿强", "小芳", "小杰", "小雨"]
THINGS_ZH = [("个", "苹果"), ("本", "书"), ("张", "贴纸"), ("支", "铅笔"), ("颗", "弹珠"), ("块", "饼干")]


def word_problems_en(rng: random.Random, count: int) -> list[dict[str, object]]:
    rows = []
    for _ in range(count):
        (who, other), thing = rng.sample(PEOPLE_EN, 2), rng.choice(THINGS_EN)
        a, b = rng.randint(2, 40), rng.randint(2, 30)
        kind = rng.choice(["add", "take", "share", "times", "two-step"])
        if kind == "add":
            q, ans = (
                f"{who} has {a} {thing} and gets {b} more from {other}. How many {thing} does {who} have?",
                a + b,
            )
        elif kind == "take":
            a = a + b
            q, ans = f"{who} had {a} {thing} and gave {b} to {other}. How many {thing} are left?", a - b
        elif kind == "share":
            n = rng.randint(2, 6)
            q, ans = (
                f"{who} shares {b * n} {thing} equally among {n} friends. How many does each friend get?",
                b,
            )
        elif kind == "times":
            n = rng.randint(2, 9)
            q, ans = f"Each box holds {b} {thing}. How many {thing} are in {n} boxes?", b * n
        else:
            c = rng.randint(1, min(a, 9))
            q, ans = (
                f"{who} has {a} {thing}, buys {b} more, then loses {c}. How many {thing} does {who} have?",
                a + b - c,
            )
        rows.append({"question": q, "answer": ans})
    return rows


def word_problems_zh(rng: random.Random, count: int) -> list[dict[str, object]]:
    rows = []
    for _ in range(count):
        who, other = rng.sample(PEOPLE_ZH, 2)
        unit, thing = rng.choice(THINGS_ZH)
        a, b = rng.randint(2, 40), rng.randint(2, 30)
        kind = rng.choice(["add", "take", "share", "times", "two-step"])
        if kind == "add":
            q, ans = (
                f"{who}有{a}{unit}{thing}，又从{other}那里得到{b}{unit}。{who}现在有多少{unit}{thing}？",
                a + b,
            )
        elif kind == "take":
            a = a + b
            q, ans = f"{who}有{a}{unit}{thing}，送给{other}{b}{unit}。还剩多少{unit}？", a - b
        elif kind == "share":
            n = rng.randint(2, 6)
            q, ans = f"{who}把{b * n}{unit}{thing}平均分给{n}个朋友，每人分到几{unit}？", b
        elif kind == "times":
            n = rng.randint(2, 9)
            q, ans = f"每盒装{b}{unit}{thing}，{n}盒一共有多少{unit}？", b * n
        else:
            c = rng.randint(1, min(a, 9))
            q, ans = (
                f"{who}有{a}{unit}{thing}，又买了{b}{unit}，后来丢了{c}{unit}。现在有多少{unit}？",
                a + b - c,
            )
        rows.append({"question": q, "answer": ans})
    return rows


POSITIVE = [
    "The battery lasts all day and the screen is sharp.",
    "Delivery was fast and the packaging was perfect.",
    "Friendly staff and a spotless room; I would stay again.",
    "The coffee is rich and the price is fair.",
    "This app saves me an hour every week.",
    "电池很耐用，屏幕也很清晰。",
    "快递很快，包装完好无损。",
    "服务员很热情，房间非常干净，下次还会再来。",
    "咖啡味道浓郁，价格也公道。",
    "这个软件每周帮我省下一个小时。",
]
NEGATIVE = [
    "The battery died after two hours.",
    "The package arrived late and the box was crushed.",
    "Rude staff and a dirty bathroom.",
    "The coffee was cold and far too expensive.",
    "The app crashes every time I open it.",
    "电池两个小时就没电了。",
    "包裹送晚了，箱子还被压坏了。",
    "服务员态度很差，卫生间也很脏。",
    "咖啡是凉的，而且太贵了。",
    "这个软件每次打开都会闪退。",
]


def sentiment(rng: random.Random, count: int) -> list[dict[str, object]]:
    rows = []
    for _ in range(count):
        good = rng.random() < 0.5
        text = rng.choice(POSITIVE if good else NEGATIVE)
        chinese = not text.isascii()
        question = (
            f"这条评价是正面的还是负面的？只用 positive 或 negative 回答。\n评价：{text}"
            if chinese
            else f"Is this review positive or negative? Answer with positive or negative.\nReview: {text}"
        )
        rows.append({"question": question, "answer": "positive" if good else "negative"})
    return rows


def main() -> None:
    rng = random.Random(20261205)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rows in (
        ("reasoning.jsonl", word_problems_en(rng, 200)),
        ("reasoning-zh.jsonl", word_problems_zh(rng, 200)),
        ("sentiment-words.jsonl", sentiment(rng, 160)),
    ):
        with open(OUT / name, "w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


if __name__ == "__main__":
    main()
