"""What a month of semfs costs in AWS at a reference workload, line by line (issue 54.1).

The sizing comes from the template itself (`template.yaml`: the Lambda memory of each function, the data nodes
a `Stage=prod` domain runs, the embedding dimension, the vector encoding); the workload and every price are
inputs, each price with where it comes from. The OpenSearch data node is chosen the way README's "Sizing
OpenSearch" says: the smallest type whose memory beside the JVM heap holds the k-NN graphs (the OpenSearch
docs' estimate, 1.1 × (bytes per vector + 8 × M) per vector) and half as much again, and whose disk holds the
index. It prints each line item for the template as it is and for the variants the template offers, so a
change to the template shows here as a change of price.

    .venv/bin/python bench/cost_model.py [--files-per-day 10000] [--chunks 1000000] [--searches-per-day 50000]

Prices are on-demand list prices for us-east-1 as published in 2025 (sources below); they are inputs, not
measurements: pass your own with --price NAME=VALUE.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
HOURS = 730  # a month

# (price, unit, source): every figure the model multiplies by
PRICES: dict[str, tuple[float, str, str]] = {
    "t3.medium.search": (0.073, "$/hour", "aws.amazon.com/opensearch-service/pricing"),
    "r6g.large.search": (0.167, "$/hour", "aws.amazon.com/opensearch-service/pricing"),
    "r6g.xlarge.search": (0.335, "$/hour", "aws.amazon.com/opensearch-service/pricing"),
    "r6g.2xlarge.search": (0.670, "$/hour", "aws.amazon.com/opensearch-service/pricing"),
    "r6g.4xlarge.search": (1.340, "$/hour", "aws.amazon.com/opensearch-service/pricing"),
    "opensearch_gp3": (0.122, "$/GiB-month", "aws.amazon.com/opensearch-service/pricing (EBS gp3)"),
    "textract_page": (0.0015, "$/page", "aws.amazon.com/textract/pricing (DetectDocumentText, first 1M pages)"),
    "llm_input": (0.15e-6, "$/token", "openai.com/api/pricing (gpt-4o-mini input)"),
    "llm_output": (0.60e-6, "$/token", "openai.com/api/pricing (gpt-4o-mini output)"),
    "embedding": (0.02e-6, "$/token", "openai.com/api/pricing (text-embedding-3-small)"),
    "lambda_gb_s": (0.0000133334, "$/GB-s", "aws.amazon.com/lambda/pricing (arm64)"),
    "lambda_request": (0.20e-6, "$/request", "aws.amazon.com/lambda/pricing"),
    "sfn_transition": (0.000025, "$/transition", "aws.amazon.com/step-functions/pricing (Standard)"),
    "ddb_write": (0.625e-6, "$/write unit", "aws.amazon.com/dynamodb/pricing/on-demand (Nov 2024)"),
    "ddb_read": (0.125e-6, "$/read unit", "aws.amazon.com/dynamodb/pricing/on-demand (Nov 2024)"),
    "s3_put": (0.005e-3, "$/request", "aws.amazon.com/s3/pricing (PUT, COPY, POST, LIST)"),
    "s3_get": (0.0004e-3, "$/request", "aws.amazon.com/s3/pricing (GET, SELECT)"),
    "s3_gb": (0.023, "$/GB-month", "aws.amazon.com/s3/pricing (Standard, first 50 TB)"),
    "http_api_request": (1.00e-6, "$/request", "aws.amazon.com/api-gateway/pricing (HTTP API)"),
}
# memory of each data node type (GiB), from the same page
NODE_GIB = {
    "t3.medium.search": 4,
    "r6g.large.search": 16,
    "r6g.xlarge.search": 32,
    "r6g.2xlarge.search": 64,
    "r6g.4xlarge.search": 128,
}
# bytes a vector's dimension takes in the graph, by the template's VectorEncoding
ENCODING_BYTES = {"float": 4.0, "sq": 1.0}


@dataclass(frozen=True)
class Workload:
    files_per_day: int = 10_000
    pages_per_file: int = 5
    scanned_share: float = 0.2  # pages without a text layer (Textract reads only those)
    chunks: int = 1_000_000  # stored, searchable
    searches_per_day: int = 50_000
    llm_input_tokens: int = 6_000  # enrichment reads at most 24k characters
    llm_output_tokens: int = 200
    embedding_tokens: int = 4_000  # chunks with their overlap, and the card
    # measured in the offline AWS test for one text file (aws_stack.iam.calls; README "Rough cost")
    ddb_write_units: int = 200
    ddb_read_units: int = 14
    transitions: int = 9
    s3_puts: int = 5
    s3_gets: int = 7
    lambda_invocations: int = 8
    pipeline_seconds: float = 6.0  # all stages of one file together, at their memory (estimate)
    search_seconds: float = 0.35  # one search request at the search function's memory (estimate)
    mb_per_file: float = 1.0
    chunks_per_file: float = 17.5  # a 5-page file is 15-20 chunks of 200 tokens


@dataclass(frozen=True)
class Template:
    """What the model reads from template.yaml (its defaults) and what a deployment chooses."""

    dim: int
    encoding: str
    nodes: int  # Stage=prod: one data node per zone, two
    stage_memory_mb: int  # the pipeline functions' (Globals)
    search_memory_mb: int  # the search API's


class _Loader(yaml.SafeLoader):
    """YAML that keeps CloudFormation's short tags (!Ref, !Sub…) as plain values."""


_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def read_template(path: Path = ROOT / "template.yaml") -> Template:
    doc: dict[str, Any] = yaml.load(path.read_text(), Loader=_Loader)
    params, resources = doc["Parameters"], doc["Resources"]
    search_fn = next(r for r in resources.values() if "search_api" in str(r.get("Properties", {}).get("CodeUri", "")))
    return Template(
        dim=int(params["EmbeddingDim"]["Default"]),
        encoding=str(params.get("VectorEncoding", {}).get("Default", "float")),
        nodes=2,
        stage_memory_mb=int(doc["Globals"]["Function"]["MemorySize"]),
        search_memory_mb=int(search_fn["Properties"].get("MemorySize", doc["Globals"]["Function"]["MemorySize"])),
    )


def graph_gib(chunks: int, dim: int, encoding: str, m: int = 16) -> float:
    """The k-NN graphs' memory (OpenSearch docs: 1.1 × (bytes per vector + 8 × M) per vector)."""
    return 1.1 * (ENCODING_BYTES[encoding] * dim + 8 * m) * chunks / 2**30


def disk_gib(chunks: int, dim: int) -> float:
    """Per copy: the full-precision vector (kept on disk whatever the graph holds) and ~2 KB of text and postings."""
    return (4 * dim + 2_048) * chunks / 2**30


def node_for(graph: float, prices: dict[str, float]) -> str:
    """The cheapest node whose memory beside the heap (half, at most 32 GiB) holds the graphs and half as much
    again (the operating system, the text postings' own cache, segment merges)."""
    fits = [t for t, gib in NODE_GIB.items() if gib - min(gib / 2, 32) >= 1.5 * graph]
    if not fits:
        raise SystemExit(f"no node type here holds {graph:.1f} GiB of graphs: add shards and nodes")
    return min(fits, key=lambda t: prices[t])


def month(work: Workload, t: Template, prices: dict[str, float]) -> dict[str, float]:
    """Each line item of a month, in dollars."""
    files = work.files_per_day * 30
    searches = work.searches_per_day * 30
    node = node_for(graph_gib(work.chunks, t.dim, t.encoding), prices)
    volume = max(10.0, 1.3 * disk_gib(work.chunks, t.dim))  # a fifth to spare, and merges
    stored_gb = work.chunks / work.chunks_per_file * work.mb_per_file / 1024  # the files the chunks come from
    return {
        f"OpenSearch {t.nodes} × {node}": t.nodes * HOURS * prices[node],
        f"OpenSearch gp3 {t.nodes} × {volume:.0f} GiB": t.nodes * volume * prices["opensearch_gp3"],
        "Textract (scanned pages)": files * work.pages_per_file * work.scanned_share * prices["textract_page"],
        "LLM enrichment": files
        * (work.llm_input_tokens * prices["llm_input"] + work.llm_output_tokens * prices["llm_output"]),
        "embeddings (files)": files * work.embedding_tokens * prices["embedding"],
        "embeddings (queries)": searches * 20 * prices["embedding"],
        "Lambda (pipeline)": files
        * (
            work.pipeline_seconds * t.stage_memory_mb / 1024 * prices["lambda_gb_s"]
            + work.lambda_invocations * prices["lambda_request"]
        ),
        "Lambda (search)": searches
        * (work.search_seconds * t.search_memory_mb / 1024 * prices["lambda_gb_s"] + prices["lambda_request"]),
        "API Gateway (search)": searches * prices["http_api_request"],
        "Step Functions Standard": files * work.transitions * prices["sfn_transition"],
        "DynamoDB on-demand": files
        * (work.ddb_write_units * prices["ddb_write"] + work.ddb_read_units * prices["ddb_read"]),
        "S3 requests": files * (work.s3_puts * prices["s3_put"] + work.s3_gets * prices["s3_get"]),
        "S3 storage (the stored files and their derived text)": 1.3 * stored_gb * prices["s3_gb"],
    }


def show(title: str, lines: dict[str, float]) -> float:
    total = sum(lines.values())
    print(f"\n{title}: ${total:,.0f} a month")
    for name, cost in sorted(lines.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<52} ${cost:>9,.2f}")
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for f in fields(Workload):
        parser.add_argument(f"--{f.name.replace('_', '-')}", type=type(f.default), default=f.default)
    parser.add_argument("--price", action="append", default=[], help="NAME=VALUE (see PRICES)")
    args = parser.parse_args()
    work = Workload(**{f.name: getattr(args, f.name) for f in fields(Workload)})
    prices = {name: value for name, (value, _, _) in PRICES.items()}
    for given in args.price:
        name, _, value = given.partition("=")
        if name not in prices:
            raise SystemExit(f"no price {name!r}: one of {', '.join(prices)}")
        prices[name] = float(value)
    deployed = read_template()
    print(f"workload: {work}")
    print(
        f"template: {deployed.dim} dimensions, vectors '{deployed.encoding}', {deployed.nodes} data nodes "
        f"(Stage=prod), stages {deployed.stage_memory_mb} MB, search {deployed.search_memory_mb} MB"
    )
    variants = {
        f"as the template deploys ({deployed.dim} dims, {deployed.encoding})": deployed,
        f"{deployed.dim} dims, float vectors (before VectorEncoding)": replace(deployed, encoding="float"),
        f"{deployed.dim} dims, scalar-quantized (VectorEncoding=sq)": replace(deployed, encoding="sq"),
    }
    totals = {title: show(title, month(work, t, prices)) for title, t in variants.items()}
    print("\nprices (on-demand list, us-east-1):")
    for name, (value, unit, source) in PRICES.items():
        shown = prices[name]
        print(f"  {name:<20} {shown:<12.8g} {unit:<14} {source}{'  (given)' if shown != value else ''}")
    goal = 1_000
    best = min(totals.values())
    print(f"\ngoal ≤ ${goal:,} a month with hybrid search: the cheapest variant is ${best:,.0f}")


if __name__ == "__main__":
    main()
