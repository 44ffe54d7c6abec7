"""Deploy artefacts (deploy/): Prometheus config and alert rules, the Grafana dashboard, the
Kubernetes manifests, and a real Prometheus scraping the metrics module.

promtool and prometheus come from Debian's ``prometheus`` package (.ci/run installs it). Where
they are missing these tests skip, except under CI=true, where they fail: CI must not pass by
skipping them. The Kubernetes manifests are validated offline against the schemas that the PyPI
package ``kubernetes-validate`` ships (dev extra). Every metric the rules and the dashboard query
must exist in ``referee.metrics.Metrics``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML, installed with kubernetes-validate
from prometheus_client import CollectorRegistry, start_http_server

from arena.local_bots import free_port, stop_bot
from referee.games.registry import game_types, make_game
from referee.metrics import Metrics
from referee.runner import MatchSpec, play_match
from tests.helpers import random_bots, run_on_bridge

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
PROMETHEUS_DIR = DEPLOY / "prometheus"
ALERTS = PROMETHEUS_DIR / "alerts.yml"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "cardarena.json"
KUBERNETES_DIR = DEPLOY / "kubernetes"
# grpc probes are GA from Kubernetes 1.27; validate against that and the newest schemas shipped.
KUBERNETES_VERSIONS = ("1.27.0", "latest")
PROMETHEUS_STARTUP_S = 30.0


def require_tool(name: str) -> str:
    """Path of ``name``; skip without it, but fail under CI=true."""
    path = shutil.which(name)
    if path is None:
        message = (
            f"{name} not found on PATH: install Debian's prometheus package "
            "(apt-get install prometheus), as .ci/run does"
        )
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def run_tool(command: Sequence[str], cwd: Path | None = None) -> str:
    """Run a command; on a non-zero exit fail with its output."""
    result = subprocess.run(list(command), cwd=cwd, capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{' '.join(command)} exited {result.returncode}:\n{output}"
    return output


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def alert_rules() -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = []
    for group in load_yaml(ALERTS)["groups"]:
        rules.extend(rule for rule in group["rules"] if "alert" in rule)
    return rules


def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def dashboard_panels() -> list[dict[str, Any]]:
    panels: list[dict[str, Any]] = []
    for panel in dashboard()["panels"]:
        panels.append(panel)
        panels.extend(panel.get("panels", []))
    return panels


def dashboard_queries() -> list[str]:
    """Every PromQL expression of the dashboard: panel targets and template-variable queries."""
    queries = [t["expr"] for p in dashboard_panels() for t in p.get("targets", []) if "expr" in t]
    for variable in dashboard()["templating"]["list"]:
        if variable["type"] == "query":
            query = variable["query"]
            queries.append(query["query"] if isinstance(query, dict) else query)
    return queries


def as_plain_promql(expr: str) -> str:
    """A dashboard expression with Grafana's variables replaced, so promtool can parse it."""
    expr = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m")
    expr = re.sub(r"\$\{?\w+\}?", ".*", expr)
    # label_values(metric, label) is Grafana's, not PromQL: check the metric selector part.
    return re.sub(r"label_values\(([^,]+),\s*\w+\)", r"\1", expr)


def kubernetes_resources() -> list[tuple[Path, dict[str, Any]]]:
    resources = []
    for path in sorted(KUBERNETES_DIR.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            if document:
                resources.append((path, document))
    return resources


def kubernetes_prometheus_config(directory: Path) -> Path:
    """Write the in-cluster Prometheus ConfigMap's files into ``directory``; the config's path."""
    (config_map,) = [
        r
        for _, r in kubernetes_resources()
        if r["kind"] == "ConfigMap" and r["metadata"]["name"] == "cardarena-prometheus"
    ]
    for name, text in config_map["data"].items():
        (directory / name).write_text(text)
    return directory / "prometheus.yml"


# --- promtool ---------------------------------------------------------------------------------


def test_prometheus_config_is_valid() -> None:
    promtool = require_tool("promtool")
    output = run_tool([promtool, "check", "config", "prometheus.yml"], cwd=PROMETHEUS_DIR)
    assert "1 rule files found" in output


def test_alert_rules_are_valid() -> None:
    promtool = require_tool("promtool")
    run_tool([promtool, "check", "rules", str(ALERTS)])


def test_alert_rules_pass_their_unit_tests() -> None:
    promtool = require_tool("promtool")
    output = run_tool([promtool, "test", "rules", "alerts.test.yml"], cwd=PROMETHEUS_DIR)
    assert "SUCCESS" in output


def test_every_alert_is_unit_tested_firing_and_has_a_runbook_entry() -> None:
    tests = load_yaml(PROMETHEUS_DIR / "alerts.test.yml")["tests"]
    firing = {
        case["alertname"]
        for test in tests
        for case in test.get("alert_rule_test", [])
        if case.get("exp_alerts")
    }
    quiet = {
        case["alertname"]
        for test in tests
        for case in test.get("alert_rule_test", [])
        if not case.get("exp_alerts")
    }
    readme = (DEPLOY / "README.md").read_text()
    for rule in alert_rules():
        name = rule["alert"]
        assert name in firing, f"{name}: no promtool test shows it firing"
        assert name in quiet, f"{name}: no promtool test shows it staying quiet"
        assert f"### {name}" in readme, f"{name}: no runbook section in deploy/README.md"
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]


def test_kubernetes_prometheus_config_is_valid_and_carries_the_same_alerts(
    tmp_path: Path,
) -> None:
    config = kubernetes_prometheus_config(tmp_path)
    assert (tmp_path / "alerts.yml").read_text() == ALERTS.read_text(), (
        "the alerts.yml key of deploy/kubernetes/prometheus.yaml differs from "
        "deploy/prometheus/alerts.yml: paste the file into the ConfigMap again"
    )
    # Debian's Prometheus is built without Kubernetes service discovery, so promtool rejects
    # kubernetes_sd_configs: check that block here and let promtool check everything else
    # (relabelling, rule files) with a static target in its place.
    settings = yaml.safe_load(config.read_text())
    (job,) = [j for j in settings["scrape_configs"] if j["job_name"] == "cardarena"]
    (discovery,) = job.pop("kubernetes_sd_configs")
    assert discovery == {"role": "pod", "namespaces": {"names": ["cardarena"]}}
    job["static_configs"] = [{"targets": ["10.0.0.1:9464"]}]
    config.write_text(json.dumps(settings))
    promtool = require_tool("promtool")
    output = run_tool([promtool, "check", "config", str(config)])
    assert "1 rule files found" in output


def test_dashboard_queries_are_valid_promql(tmp_path: Path) -> None:
    """promtool parses each dashboard query as a recording rule."""
    rules = [
        {"record": f"cardarena_dashboard:query_{i}", "expr": as_plain_promql(expr)}
        for i, expr in enumerate(dashboard_queries())
    ]
    path = tmp_path / "dashboard-queries.yml"
    path.write_text(json.dumps({"groups": [{"name": "dashboard", "rules": rules}]}))
    promtool = require_tool("promtool")
    run_tool([promtool, "check", "rules", str(path)])


# --- metric names -----------------------------------------------------------------------------

SELECTOR = re.compile(r"\b(cardarena_[a-zA-Z0-9_]+)(?!\s*:)(\{[^}]*\})?")
MATCHER = re.compile(r'(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"')
GROUPING = re.compile(r"\b(?:by|without)\s*\(([^)]*)\)")
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
TARGET_LABELS = {"job", "instance", "pod", "namespace"}


@dataclass
class Exported:
    """What ``Metrics`` exports on a fresh registry: sample names, and their labels' values."""

    histograms: set[str]
    samples: dict[str, dict[str, set[str]]]

    def resolve(self, name: str) -> str | None:
        """The exported sample name that a queried name stands for, or None if unknown."""
        if name in self.samples:
            return name
        for suffix in HISTOGRAM_SUFFIXES:
            if name.endswith(suffix) and name.removesuffix(suffix) in self.histograms:
                return name
        return None


def exported_metrics() -> Exported:
    registry = CollectorRegistry()
    Metrics([g.name for g in game_types()], registry)
    histograms: set[str] = set()
    samples: dict[str, dict[str, set[str]]] = {}
    for family in registry.collect():
        if family.type == "histogram":
            histograms.add(family.name)
        for sample in family.samples:
            labels = samples.setdefault(sample.name, {})
            for label, value in sample.labels.items():
                labels.setdefault(label, set()).add(value)
    return Exported(histograms, samples)


def queried_expressions() -> list[tuple[str, str]]:
    """(where, PromQL) for every alert rule and dashboard query."""
    found = [(f"alert {rule['alert']}", str(rule["expr"])) for rule in alert_rules()]
    found += [(f"dashboard query {i}", q) for i, q in enumerate(dashboard_queries())]
    return found


def test_rules_and_dashboard_query_only_metrics_and_labels_that_exist() -> None:
    exported = exported_metrics()
    all_labels = {label for labels in exported.samples.values() for label in labels}
    problems: list[str] = []
    queried: set[str] = set()
    for where, expr in queried_expressions():
        for name, selector in SELECTOR.findall(expr):
            sample = exported.resolve(name)
            if sample is None:
                problems.append(f"{where}: {name} is not exported by referee.metrics")
                continue
            queried.add(sample)
            labels = exported.samples.get(sample, {})
            for label, op, value in MATCHER.findall(selector or ""):
                if label in TARGET_LABELS or (label == "le" and name.endswith("_bucket")):
                    continue
                if label not in labels:
                    problems.append(f"{where}: {name} has no label {label!r}")
                elif op in ("=", "=~") and "$" not in value and ".*" not in value:
                    for alternative in value.split("|"):
                        if alternative not in labels[label]:
                            problems.append(f"{where}: {name}{{{label}}} is never {alternative!r}")
        for grouping in GROUPING.findall(expr):
            for label in filter(None, (s.strip() for s in grouping.split(","))):
                if label not in all_labels | TARGET_LABELS | {"le"}:
                    problems.append(f"{where}: groups by unknown label {label!r}")
    assert not problems, "\n".join(problems)
    # The parse is rough: make sure it saw the metrics the issue names.
    for needed in (
        "cardarena_matches_finished_total",
        "cardarena_bot_faults_total",
        "cardarena_match_duration_seconds_bucket",
        "cardarena_bot_call_duration_seconds_bucket",
        "cardarena_matches_in_flight",
        "cardarena_matches_waiting",
        "cardarena_bots_pulled",
    ):
        assert needed in queried, f"nothing queries {needed}"


def test_metric_name_check_catches_a_typo() -> None:
    exported = exported_metrics()
    assert exported.resolve("cardarena_match_duration_seconds_bucket") is not None
    assert exported.resolve("cardarena_matches_finished_total") is not None
    assert exported.resolve("cardarena_matches_finished") is None
    assert exported.resolve("cardarena_decisions_bucket") is None
    assert exported.resolve("cardarena_bots_pulled_total") is None


# --- Grafana dashboard ------------------------------------------------------------------------


def test_dashboard_is_self_consistent() -> None:
    data = dashboard()
    panels = dashboard_panels()
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    assert data["uid"] and data["title"]
    variables = {v["name"] for v in data["templating"]["list"]}
    assert {"datasource", "game"} <= variables
    for panel in panels:
        if panel["type"] == "row":
            continue
        assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
        assert panel["targets"], panel["title"]
        assert {"h", "w", "x", "y"} <= panel["gridPos"].keys()
    titles = " ".join(p["title"].lower() for p in panels)
    for topic in ("finished", "latency", "faults", "in flight", "waiting"):
        assert topic in titles, f"no panel about {topic}"
    provisioning = DEPLOY / "grafana" / "provisioning"
    datasource = load_yaml(provisioning / "datasources" / "prometheus.yml")["datasources"][0]
    assert datasource["type"] == "prometheus" and datasource["uid"] == "prometheus"


# --- Kubernetes -------------------------------------------------------------------------------


def test_kubernetes_manifests_validate_offline_against_the_schemas() -> None:
    from kubernetes_validate import (  # type: ignore[import-untyped]
        ValidationError,
        latest_version,
        validate,
    )

    resources = kubernetes_resources()
    kinds = {r["kind"] for _, r in resources}
    assert {"Deployment", "Service", "ConfigMap"} <= kinds
    for version in KUBERNETES_VERSIONS:
        version = latest_version() if version == "latest" else version
        for path, resource in resources:
            where = f"{path.name} {resource['kind']}/{resource['metadata']['name']}"
            try:
                # strict: unknown fields (a misspelt key) are errors too. A kind without a
                # schema raises SchemaNotFoundError, which fails the test as it should.
                validate(resource, version, strict=True)
            except ValidationError as error:
                field = ".".join(str(p) for p in error.path)
                pytest.fail(f"{where} invalid for Kubernetes {version}: {field}: {error}")

    # The validator does bite: a misspelt probe field is rejected.
    _, arena = next((p, r) for p, r in resources if r["kind"] == "Deployment")
    broken = json.loads(json.dumps(arena))
    container = broken["spec"]["template"]["spec"]["containers"][0]
    container["readinessProbe"]["grpcc"] = container["readinessProbe"].pop("grpc")
    with pytest.raises(ValidationError):
        validate(broken, latest_version(), strict=True)


def test_arena_deployment_probes_and_scrape_annotations() -> None:
    (arena,) = [
        r
        for _, r in kubernetes_resources()
        if r["kind"] == "Deployment" and r["metadata"]["name"] == "cardarena-arena"
    ]
    template = arena["spec"]["template"]
    (container,) = template["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["grpc"]["port"] == ports["grpc"], probe
    annotations = template["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert int(annotations["prometheus.io/port"]) == ports["metrics"]
    assert template["spec"]["securityContext"]["runAsNonRoot"] is True
    assert f"--listen=0.0.0.0:{ports['grpc']}" in container["args"]
    assert f"--metrics-listen=0.0.0.0:{ports['metrics']}" in container["args"]


# --- a real Prometheus ------------------------------------------------------------------------


@dataclass
class PrometheusServer:
    """A Prometheus process on loopback and its HTTP API."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as response:
            body = json.load(response)
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's vector result."""
        data = self.api("query", query=expr)
        assert data["resultType"] == "vector", data
        result: list[dict[str, Any]] = data["result"]
        return result

    def wait_for_value(self, expr: str, expected: float, timeout_s: float = 30.0) -> None:
        """Poll until ``expr`` evaluates to a single sample equal to ``expected``."""
        deadline = time.monotonic() + timeout_s
        result: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            result = self.query(expr)
            if len(result) == 1 and float(result[0]["value"][1]) == expected:
                return
            time.sleep(0.25)
        raise AssertionError(f"{expr} never became {expected}: last {result}\n{self.log_tail()}")

    def log_tail(self) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])


@contextmanager
def running_prometheus(
    targets: Sequence[str],
    workdir: Path,
    job: str = "cardarena",
    scrape_interval: str = "1s",
    rule_files: Sequence[Path] = (),
) -> Iterator[PrometheusServer]:
    """A real Prometheus on a free loopback port scraping ``targets`` (host:port) as ``job``.

    Storage and log live in ``workdir``. Skips (fails under CI=true) without the binary.
    """
    binary = require_tool("prometheus")
    config = {
        "global": {"scrape_interval": scrape_interval, "evaluation_interval": scrape_interval},
        "rule_files": [str(path) for path in rule_files],
        "scrape_configs": [{"job_name": job, "static_configs": [{"targets": list(targets)}]}],
    }
    config_path = workdir / "prometheus.yml"
    config_path.write_text(json.dumps(config))  # JSON is YAML
    port = free_port()
    log = workdir / "prometheus.log"
    with log.open("wb") as log_file:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config_path}",
                f"--storage.tsdb.path={workdir / 'tsdb'}",
                f"--web.listen-address=127.0.0.1:{port}",
            ],
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    server = PrometheusServer(f"http://127.0.0.1:{port}", process, log)
    try:
        deadline = time.monotonic() + PROMETHEUS_STARTUP_S
        while True:
            if process.poll() is not None:
                code = process.returncode
                raise AssertionError(f"prometheus exited {code}:\n{server.log_tail()}")
            try:
                with urllib.request.urlopen(f"{server.url}/-/ready", timeout=2) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"prometheus not ready in time:\n{server.log_tail()}")
            time.sleep(0.1)
        yield server
    finally:
        stop_bot(process, grace_s=10)


def test_prometheus_scrapes_the_metrics_of_a_real_match(tmp_path: Path) -> None:
    require_tool("prometheus")  # before playing the match
    registry = CollectorRegistry()
    metrics = Metrics([g.name for g in game_types()], registry)
    http_server, thread = start_http_server(0, addr="127.0.0.1", registry=registry)
    try:
        target = f"127.0.0.1:{http_server.server_port}"
        game = make_game("oh-hell", 3, {"deal_style": "short_low"})
        with random_bots(3) as bots:
            spec = MatchSpec(game, [b.address for b in bots], seed=11)
            record = run_on_bridge(lambda pool: play_match(spec, pool, metrics=metrics))
        with running_prometheus([target], tmp_path, rule_files=[ALERTS]) as prometheus:
            prometheus.wait_for_value('up{job="cardarena"}', 1)
            prometheus.wait_for_value("sum(cardarena_matches_finished_total)", 1)
            prometheus.wait_for_value(
                'cardarena_matches_finished_total{game="oh-hell", outcome="completed"}', 1
            )
            prometheus.wait_for_value(
                'sum(cardarena_decisions_total{game="oh-hell"})', len(record.moves)
            )
            groups = prometheus.api("rules")["groups"]
            loaded = {rule["name"] for group in groups for rule in group["rules"]}
            assert loaded == {rule["alert"] for rule in alert_rules()}
    finally:
        http_server.shutdown()
        http_server.server_close()
        thread.join(5)
