"""Extract a checkpoint's quantization section from a saved model report and write it as a checkpoint_quant/ record.

Long ignore lists (GLM-5.1-FP8's 712 modules_to_not_convert, GLM-4.5-FP8's compressed-tensors ignore) are parsed from
the report's text, not retyped. A report (gogongxt/python scripts/models/*.md) prints the release's config.json raw
(a ```json block under "原始 config.json") and/or transformers' repr of it (`XxxConfig { ... }`, keys sorted); the raw
block is preferred. The record holds the section verbatim; `--profile` prints the module classes
whatif.specs.checkpoint_quant maps its ignore list onto, to check before shipping.

  PYTHONPATH=$PWD python3 benchmarks/quant_record_from_report.py REPORT.txt --id zai-org/GLM-5.1-FP8 \
      --note "Copied from ..." --profile glm-5 [--out whatif/model_profiles/checkpoint_quant/zai-org--GLM-5.1-FP8.json]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

RAW_MARK = "原始 config.json"


def _balanced(text: str, start: int) -> str:
    """The JSON object that opens at text[start] ('{'), braces counted outside strings."""
    depth, in_str, esc = 0, False, False
    for i in range(start, len(text)):
        ch = text[i]
        if in_str:
            esc, in_str = (False, in_str) if esc else (ch == "\\", ch != '"')
            continue
        if ch == '"':
            in_str = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    raise ValueError("report: a config object opens but never closes (is the saved text whole?)")


def config_from_report(text: str) -> tuple[dict, str]:
    """(the config as a dict, which copy: 'raw config.json' or 'transformers repr')."""
    mark = text.find(RAW_MARK)
    if mark >= 0:
        fence = text.find("```json", mark)
        if fence >= 0:
            return json.loads(_balanced(text, text.index("{", fence))), "raw config.json"
    match = re.search(r"\b\w+Config \{", text)
    if match is None:
        raise ValueError("report: neither a raw config.json block nor a transformers `XxxConfig {` repr found")
    return json.loads(_balanced(text, match.end() - 1)), "transformers repr"


def quant_section(config: dict) -> dict:
    """quantization_config of the config (or of its text_config)."""
    q = config.get("quantization_config") or (config.get("text_config") or {}).get("quantization_config")
    if not isinstance(q, dict):
        raise ValueError("report: the config has no quantization_config")
    return q


def ignore_list(q: dict) -> list:
    return q.get("modules_to_not_convert") or q.get("ignore") or q.get("exclude_modules") or []


def record(hf_id: str, note: str, q: dict) -> dict:
    return {"id": hf_id, "source": f"https://huggingface.co/{hf_id}/blob/main/config.json", "note": note,
            "quantization_config": q}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report", help="the report's text, saved whole (read_file pages concatenated)")
    ap.add_argument("--id", required=True, help="the release's Hugging Face id")
    ap.add_argument("--note", default="", help="where the copy was read (repository, path, commit)")
    ap.add_argument("--profile", help="a shipped profile: print the classes its ignore list leaves 16-bit")
    ap.add_argument("--out", help="write the record here (else print a summary only)")
    args = ap.parse_args(argv)
    try:
        config, copy = config_from_report(Path(args.report).read_text(encoding="utf-8"))
        q = quant_section(config)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    entries = ignore_list(q)
    keys = sorted(k for k in q if k not in ("ignore", "modules_to_not_convert"))
    print(f"{args.id}: {copy}; quant_method {q.get('quant_method')!r}; {len(entries)} ignore entries "
          f"({len(set(entries))} distinct); keys {keys}")
    if args.profile:
        from whatif.specs.checkpoint_quant import ignored_classes
        from whatif.specs.models import load_model
        whole, partial = ignored_classes(entries, load_model(args.profile))
        print(f"  classes left 16-bit on {args.profile}: {[c for c, _ in whole] or 'none'}; partial: {list(partial)}")
    if args.out:
        Path(args.out).write_text(json.dumps(record(args.id, args.note, q), indent=1, ensure_ascii=False) + "\n",
                                  encoding="utf-8")
        print(f"  wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
