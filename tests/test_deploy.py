"""Deploy artefacts (deploy/): Prometheus config and alert rules, the Grafana dashboard, the
Kubernetes manifests, and a real Prometheus scraping the metrics module.

promtool and prometheus come from Debian's ``prometheus`` package (.ci/run installs it). Where
they are missing these tests skip, except under CI=true, where they fail: CI must not pass by
skipping them. The Kubernetes manifests are validated offline against the schemas that the PyPI
package ``kubernetes-validate`` ships (dev extra). Every metric the rules and the dashboard query
must exist in ``arena.metrics.Metrics``. The scale-out shapes (Kubernetes, one Deployment or
split by role; compose with compose.scale-out.yaml) are checked for what the schemas cannot see:
one worker id per process, an explicit valid role, readiness and liveness on different health
services, a stop grace covering --shutdown-grace-s, one PodDisruptionBudget per set of pods; each
check is shown catching the mistake it is for.
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]  # PyYAML, installed with kubernetes-validate
from prometheus_client import CollectorRegistry, start_http_server

from arena.local_bots import free_port, stop_bot
from arena.metrics import Metrics
from arena.server import SERVICE_NAME as ARENA_SERVICE_NAME
from referee.games.registry import game_types, make_game
from referee.runner import MatchSpec, play_match
from tests.helpers import random_bots, run_on_bridge

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
PROMETHEUS_DIR = DEPLOY / "prometheus"
ALERTS = PROMETHEUS_DIR / "alerts.yml"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "cardarena.json"
KUBERNETES_DIR = DEPLOY / "kubernetes"
# The arena's two shapes on Kubernetes, used one or the other: one Deployment of --role=all, or
# Deployments split by role (docs/scale-out.md).
ARENA_MANIFEST = KUBERNETES_DIR / "arena.yaml"
SPLIT_ARENA_MANIFEST = KUBERNETES_DIR / "split" / "arena.yaml"
COMPOSE = DEPLOY / "compose.yaml"
COMPOSE_SCALE_OUT = DEPLOY / "compose.scale-out.yaml"
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
    """Every resource under deploy/kubernetes/ (subdirectories included) and its file."""
    resources: list[tuple[Path, dict[str, Any]]] = []
    for path in sorted(KUBERNETES_DIR.rglob("*.yaml")):
        resources.extend((path, document) for document in manifest(path))
    return resources


def manifest(path: Path) -> list[dict[str, Any]]:
    """The resources of one manifest file."""
    return [document for document in yaml.safe_load_all(path.read_text()) if document]


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


@pytest.mark.parametrize("config", ["prometheus.yml", "prometheus-scale-out.yml"])
def test_prometheus_config_is_valid(config: str) -> None:
    promtool = require_tool("promtool")
    output = run_tool([promtool, "check", "config", config], cwd=PROMETHEUS_DIR)
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
                problems.append(f"{where}: {name} is not exported by arena.metrics")
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
    assert {"Deployment", "Service", "ConfigMap", "PodDisruptionBudget"} <= kinds
    assert SPLIT_ARENA_MANIFEST in {path for path, _ in resources}
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


# --- scale-out: roles, worker identity, draining, disruption budgets -----------------------------

ARENA_ROLES = ("all", "api", "scheduler", "referee")
SCHEDULING_ROLES = {"all", "scheduler"}
REFEREEING_ROLES = {"all", "referee"}
WORKER_ID_ENV = "CARDARENA_WORKER_ID"
# Health services (docs/scale-out.md): "" (and the ArenaService's name) turn NOT_SERVING as soon
# as a process drains; "liveness" stays SERVING until it exits.
READINESS_SERVICES = {"", ARENA_SERVICE_NAME}
LIVENESS_SERVICE = "liveness"
# The time to grant on top of --shutdown-grace-s: stopping the API (1 s for calls in flight) and
# the house bot (0.5 s), closing the bot channels and the database pool, and slack for a slow
# database. The manifests grant 10 s.
SHUTDOWN_MARGIN_S = 5.0
KUBERNETES_DEFAULT_TERMINATION_GRACE_S = 30
COMPOSE_DEFAULT_STOP_GRACE_S = 10.0
ARENA_DEFAULT_SHUTDOWN_GRACE_S = 10.0
# The web UI (docs/web.md): served by the processes that answer clients, on this port.
WEB_ROLES = {"all", "api"}
WEB_PORT = 8080
WEB_PORT_NAME = "web"


def flag_values(args: Sequence[str], name: str) -> list[str]:
    """Every value given to the option ``name`` in ``args``, as ``name=V`` or ``name V``."""
    values = []
    for index, arg in enumerate(args):
        if arg.startswith(f"{name}="):
            values.append(arg.split("=", 1)[1])
        elif arg == name and index + 1 < len(args):
            values.append(args[index + 1])
    return values


def selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """Whether a Kubernetes label selector (matchLabels, matchExpressions) selects ``labels``."""
    for key, value in selector.get("matchLabels", {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions", []):
        key, operator = expression["key"], expression["operator"]
        values = set(expression.get("values", []))
        if not {
            "In": key in labels and labels[key] in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }[operator]:
            return False
    return True


def env_field_path(container: dict[str, Any], name: str) -> str | None:
    """The downward-API field an environment variable comes from, or None."""
    for variable in container.get("env", []):
        if variable["name"] == name:
            field_path: str | None = (
                variable.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
            )
            return field_path
    return None


def grpc_probe_service(container: dict[str, Any], probe: str) -> str | None:
    """The grpc.health.v1 service a probe asks about ("" when unset), or None if no gRPC probe."""
    grpc_action = container.get(probe, {}).get("grpc")
    return None if grpc_action is None else str(grpc_action.get("service", ""))


def arena_container(deployment: dict[str, Any]) -> dict[str, Any] | None:
    """The container running ``arena serve`` in a Deployment, or None."""
    for container in deployment["spec"]["template"]["spec"]["containers"]:
        if container.get("args", [])[:1] == ["serve"]:
            found: dict[str, Any] = container
            return found
    return None


def pod_labels(deployment: dict[str, Any]) -> dict[str, str]:
    labels: dict[str, str] = deployment["spec"]["template"]["metadata"]["labels"]
    return labels


def arena_deployments(resources: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in resources if r["kind"] == "Deployment" and arena_container(r) is not None]


def role_of(args: Sequence[str], where: str, problems: list[str]) -> str | None:
    """The --role in ``args``; a problem unless exactly one of the four is given."""
    roles = flag_values(args, "--role")
    if len(roles) != 1 or roles[0] not in ARENA_ROLES:
        problems.append(f"{where}: --role must be given once, one of {ARENA_ROLES}: {roles}")
        return None
    return roles[0]


def shutdown_grace_of(args: Sequence[str], where: str, problems: list[str]) -> float | None:
    values = flag_values(args, "--shutdown-grace-s")
    if len(values) != 1:
        problems.append(f"{where}: set --shutdown-grace-s explicitly, once: {values}")
        return None
    return float(values[0])


def roles_problems(roles: Sequence[str], where: str) -> list[str]:
    """A set of arena processes must schedule matches and play them."""
    problems = []
    if not SCHEDULING_ROLES & set(roles):
        problems.append(f"{where}: no process schedules matches (roles {sorted(roles)})")
    if not REFEREEING_ROLES & set(roles):
        problems.append(f"{where}: no process plays matches (roles {sorted(roles)})")
    return problems


def arena_manifest_problems(resources: Sequence[dict[str, Any]]) -> list[str]:
    """What is wrong with one manifest file's arena Deployments, as a list of sentences.

    Each replica has its own worker id (the pod's name) and advertise address (the pod's IP),
    an explicit role; readiness asks the health service that turns NOT_SERVING on draining,
    liveness the one that stays SERVING; the pod's termination grace covers --shutdown-grace-s
    plus ``SHUTDOWN_MARGIN_S``; one PodDisruptionBudget selects its pods; no Deployment selects
    another's pods; a scheduler Deployment has a replica to fail over to; someone schedules and
    someone plays; a Service sends clients to arena pods.
    """
    problems: list[str] = []
    deployments = arena_deployments(resources)
    if not deployments:
        return ["no Deployment runs arena serve"]
    budgets = [r for r in resources if r["kind"] == "PodDisruptionBudget"]
    services = [r for r in resources if r["kind"] == "Service"]
    roles: list[str] = []
    for deployment in deployments:
        name = deployment["metadata"]["name"]
        spec = deployment["spec"]
        pod = spec["template"]
        labels = pod_labels(deployment)
        container = arena_container(deployment)
        assert container is not None
        args = container["args"]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}

        role = role_of(args, name, problems)
        if role is not None:
            roles.append(role)
            if labels.get("app.kubernetes.io/component") != role:
                problems.append(f"{name}: pod label app.kubernetes.io/component is not {role!r}")
            if role == "scheduler" and spec.get("replicas", 1) < 2:
                problems.append(f"{name}: one scheduler replica has nothing to fail over to")

        if flag_values(args, "--worker-id"):
            problems.append(f"{name}: --worker-id in args gives every replica the same id")
        if env_field_path(container, WORKER_ID_ENV) != "metadata.name":
            problems.append(
                f"{name}: replicas could share a worker id: {WORKER_ID_ENV} must come from "
                "the downward API fieldRef metadata.name"
            )
        advertised = flag_values(args, "--advertise-address")
        if advertised not in ([f"$(POD_IP):{ports['grpc']}"], [f"[$(POD_IP)]:{ports['grpc']}"]):
            problems.append(f"{name}: --advertise-address must be $(POD_IP):{ports['grpc']}")
        if env_field_path(container, "POD_IP") != "status.podIP":
            problems.append(f"{name}: POD_IP must come from the downward API status.podIP")

        readiness = grpc_probe_service(container, "readinessProbe")
        liveness = grpc_probe_service(container, "livenessProbe")
        if readiness == liveness:
            problems.append(f"{name}: readiness and liveness ask the same health service")
        if readiness not in READINESS_SERVICES:
            problems.append(f"{name}: readiness must ask service '' (false while draining)")
        if liveness != LIVENESS_SERVICE:
            problems.append(f"{name}: liveness must ask service {LIVENESS_SERVICE!r}")
        if grpc_probe_service(container, "startupProbe") is None:
            problems.append(f"{name}: no gRPC startup probe")

        grace = shutdown_grace_of(args, name, problems)
        termination = pod["spec"].get(
            "terminationGracePeriodSeconds", KUBERNETES_DEFAULT_TERMINATION_GRACE_S
        )
        if grace is not None and termination < grace + SHUTDOWN_MARGIN_S:
            problems.append(
                f"{name}: terminationGracePeriodSeconds {termination} < --shutdown-grace-s "
                f"{grace:g} + {SHUTDOWN_MARGIN_S:g} s margin"
            )

        covering = [
            b["metadata"]["name"] for b in budgets if selects(b["spec"]["selector"], labels)
        ]
        if len(covering) != 1:
            problems.append(
                f"{name}: {len(covering)} PodDisruptionBudgets select its pods, not one: "
                f"{covering} (with none a drain may take every replica at once; with two the "
                "eviction API refuses to evict)"
            )
        for other in deployments:
            if other is not deployment and selects(spec["selector"], pod_labels(other)):
                problems.append(
                    f"{name}: its selector also selects {other['metadata']['name']}'s pods"
                )
        if not selects(spec["selector"], labels):
            problems.append(f"{name}: its selector does not select its own pods")
    problems += roles_problems(roles, "these Deployments")
    pods = [pod_labels(d) for d in deployments]
    if not any(
        selects({"matchLabels": service["spec"]["selector"]}, labels)
        for service in services
        if "selector" in service["spec"]  # none: endpoints managed by hand
        for labels in pods
    ):
        problems.append("no Service selects the arena pods")
    problems += kubernetes_web_problems(deployments, services)
    return problems


def web_listen_problems(args: Sequence[str], role: str, where: str) -> list[str]:
    """The API roles serve the web UI on every interface at ``WEB_PORT``; the others none."""
    values = flag_values(args, "--web-listen")
    if role in WEB_ROLES:
        if values != [f"0.0.0.0:{WEB_PORT}"]:
            return [f"{where}: --web-listen must be 0.0.0.0:{WEB_PORT} (role {role}): {values}"]
    elif values != [""]:
        return [f"{where}: role {role} serves no web UI: give --web-listen= ({values})"]
    return []


def kubernetes_web_problems(
    deployments: Sequence[dict[str, Any]], services: Sequence[dict[str, Any]]
) -> list[str]:
    """Each API-role pod serves the web UI on a container port named ``web``, which a Service
    that selects the pods publishes as ``web`` on ``WEB_PORT``; the other roles have no web port."""
    problems: list[str] = []
    for deployment in deployments:
        name = deployment["metadata"]["name"]
        container = arena_container(deployment)
        assert container is not None
        roles = flag_values(container["args"], "--role")
        role = roles[0] if len(roles) == 1 else "all"
        problems += web_listen_problems(container["args"], role, name)
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        if role not in WEB_ROLES:
            if WEB_PORT_NAME in ports:
                problems.append(f"{name}: role {role} has a web port but serves no web UI")
            continue
        if ports.get(WEB_PORT_NAME) != WEB_PORT:
            problems.append(f"{name}: container port {WEB_PORT_NAME!r} must be {WEB_PORT}")
        published = [
            port
            for service in services
            if selects({"matchLabels": service["spec"].get("selector", {})}, pod_labels(deployment))
            for port in service["spec"]["ports"]
            if port["name"] == WEB_PORT_NAME
            and port["port"] == WEB_PORT
            and port["targetPort"] in (WEB_PORT_NAME, WEB_PORT)
        ]
        if not published:
            problems.append(
                f"{name}: no Service publishes its web UI as port {WEB_PORT_NAME!r} {WEB_PORT}"
            )
    return problems


@pytest.mark.parametrize("path", [ARENA_MANIFEST, SPLIT_ARENA_MANIFEST], ids=["single", "split"])
def test_arena_manifests_give_replicas_identities_and_drain_cleanly(path: Path) -> None:
    assert arena_manifest_problems(manifest(path)) == []


def test_split_manifest_runs_every_role_and_fails_over_the_scheduler() -> None:
    deployments = arena_deployments(manifest(SPLIT_ARENA_MANIFEST))
    replicas = {}
    for deployment in deployments:
        container = arena_container(deployment)
        assert container is not None
        (role,) = flag_values(container["args"], "--role")
        replicas[role] = deployment["spec"]["replicas"]
    assert replicas.keys() == {"api", "scheduler", "referee"}
    assert replicas["scheduler"] >= 2
    (service,) = [r for r in manifest(SPLIT_ARENA_MANIFEST) if r["kind"] == "Service"]
    assert service["spec"]["selector"]["app.kubernetes.io/component"] == "api"


def comparable_pod(deployment: dict[str, Any]) -> dict[str, Any]:
    """A Deployment's pod template without what differs between roles (the web UI is the API
    roles' only: web_problems checks it)."""
    pod = json.loads(json.dumps(deployment["spec"]["template"]))
    pod["metadata"]["labels"].pop("app.kubernetes.io/component")
    for container in pod["spec"]["containers"]:
        container.pop("resources")
        container["args"] = [
            a for a in container["args"] if not a.startswith(("--role", "--web-listen"))
        ]
        container["ports"] = [p for p in container["ports"] if p["name"] != WEB_PORT_NAME]
    return dict(pod)


def test_split_manifest_pods_are_the_single_deployments_but_for_role_and_resources() -> None:
    (single,) = arena_deployments(manifest(ARENA_MANIFEST))
    for deployment in arena_deployments(manifest(SPLIT_ARENA_MANIFEST)):
        assert comparable_pod(deployment) == comparable_pod(single), (
            f"{deployment['metadata']['name']} drifted from arena.yaml's pod template"
        )


def without(kind: str) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(resources: list[dict[str, Any]]) -> None:
        resources[:] = [r for r in resources if r["kind"] != kind]

    return mutate


def first_container(resources: list[dict[str, Any]]) -> dict[str, Any]:
    container = arena_container(arena_deployments(resources)[0])
    assert container is not None
    return container


def set_env(name: str, entry: dict[str, Any]) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(resources: list[dict[str, Any]]) -> None:
        env = first_container(resources)["env"]
        env[:] = [v for v in env if v["name"] != name] + [{"name": name, **entry}]

    return mutate


def replace_arg(prefix: str, *new: str) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(resources: list[dict[str, Any]]) -> None:
        args = first_container(resources)["args"]
        args[:] = [a for a in args if not a.startswith(prefix)] + list(new)

    return mutate


def set_probe_service(probe: str, service: str) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(resources: list[dict[str, Any]]) -> None:
        first_container(resources)[probe]["grpc"]["service"] = service

    return mutate


def set_termination_grace(seconds: int) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(resources: list[dict[str, Any]]) -> None:
        arena_deployments(resources)[0]["spec"]["template"]["spec"][
            "terminationGracePeriodSeconds"
        ] = seconds

    return mutate


def set_budget_component(component: str) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(resources: list[dict[str, Any]]) -> None:
        for r in resources:
            if r["kind"] == "PodDisruptionBudget":
                r["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"] = component

    return mutate


def set_service_port(name: str, number: int) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(resources: list[dict[str, Any]]) -> None:
        for service in (r for r in resources if r["kind"] == "Service"):
            for port in service["spec"]["ports"]:
                if port["name"] == name:
                    port["port"] = number

    return mutate


def drop_container_port(name: str) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(resources: list[dict[str, Any]]) -> None:
        container = first_container(resources)
        container["ports"] = [p for p in container["ports"] if p["name"] != name]

    return mutate


def duplicate_budget(resources: list[dict[str, Any]]) -> None:
    (budget,) = [r for r in resources if r["kind"] == "PodDisruptionBudget"]
    resources.append(json.loads(json.dumps(budget)) | {"metadata": {"name": "another"}})


MISTAKES: list[tuple[str, Callable[[list[dict[str, Any]]], None], str]] = [
    ("fixed worker id", set_env(WORKER_ID_ENV, {"value": "arena"}), "could share a worker id"),
    (
        "worker id from the node",
        set_env(WORKER_ID_ENV, {"valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}),
        "could share a worker id",
    ),
    ("--worker-id in args", replace_arg("--worker-id", "--worker-id=arena"), "same id"),
    ("no advertise address", replace_arg("--advertise-address"), "--advertise-address"),
    ("no POD_IP", set_env("POD_IP", {"value": "10.0.0.1"}), "status.podIP"),
    ("no budget", without("PodDisruptionBudget"), "0 PodDisruptionBudgets"),
    ("budget selects other pods", set_budget_component("referee"), "0 PodDisruptionBudgets"),
    ("two budgets", duplicate_budget, "2 PodDisruptionBudgets"),
    ("same probe service", set_probe_service("livenessProbe", ""), "same health service"),
    ("readiness on liveness", set_probe_service("readinessProbe", "liveness"), "readiness must"),
    ("grace too short", set_termination_grace(19), "terminationGracePeriodSeconds 19"),
    (
        "grace raised alone",
        replace_arg("--shutdown-grace-s", "--shutdown-grace-s=30"),
        "< --shutdown-grace-s 30",
    ),
    ("implicit grace", replace_arg("--shutdown-grace-s"), "--shutdown-grace-s explicitly"),
    ("unknown role", replace_arg("--role", "--role=worker"), "--role must be"),
    ("implicit role", replace_arg("--role"), "--role must be"),
    ("api only", replace_arg("--role", "--role=api"), "no process plays matches"),
    ("no service", without("Service"), "no Service selects"),
    ("no web UI", replace_arg("--web-listen"), "--web-listen must be 0.0.0.0:8080"),
    (
        "web UI on loopback",
        replace_arg("--web-listen", "--web-listen=127.0.0.1:8080"),
        "--web-listen must be",
    ),
    ("web port not published", set_service_port("web", 8081), "no Service publishes its web"),
    ("no web container port", drop_container_port("web"), "container port 'web' must be 8080"),
]


@pytest.mark.parametrize(("mistake", "mutate", "expected"), MISTAKES, ids=[m[0] for m in MISTAKES])
def test_arena_manifest_check_catches(
    mistake: str, mutate: Callable[[list[dict[str, Any]]], None], expected: str
) -> None:
    resources = json.loads(json.dumps(manifest(ARENA_MANIFEST)))
    mutate(resources)
    problems = arena_manifest_problems(resources)
    assert any(expected in p for p in problems), f"{mistake}: {problems}"


def test_split_manifest_check_catches_a_lone_scheduler_and_a_missing_referee() -> None:
    resources = manifest(SPLIT_ARENA_MANIFEST)
    (scheduler,) = [d for d in arena_deployments(resources) if "scheduler" in d["metadata"]["name"]]
    scheduler["spec"]["replicas"] = 1
    assert any("nothing to fail over to" in p for p in arena_manifest_problems(resources))
    resources = [
        r for r in manifest(SPLIT_ARENA_MANIFEST) if "referee" not in r["metadata"]["name"]
    ]
    assert any("no process plays matches" in p for p in arena_manifest_problems(resources))


# --- scale-out on compose -----------------------------------------------------------------------

DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(h|ms|us|m|s)")
DURATION_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6}


def compose_duration_s(text: str) -> float:
    """A compose duration ("25s", "1m30s") in seconds."""
    parts = DURATION_PART.findall(text)
    assert "".join(n + u for n, u in parts) == text, f"not a compose duration: {text!r}"
    return sum(float(number) * DURATION_UNIT_S[unit] for number, unit in parts)


def compose_services(*paths: Path) -> dict[str, dict[str, Any]]:
    """The services of compose files applied in order (``-f a -f b``), merged as compose does
    for the keys checked here: a mapping key by key, anything else replaced."""
    services: dict[str, dict[str, Any]] = {}
    for path in paths:
        for name, service in load_yaml(path)["services"].items():
            merged = services.setdefault(name, {})
            for key, value in service.items():
                if isinstance(value, dict) and isinstance(merged.get(key), dict):
                    merged[key] = {**merged[key], **value}
                else:
                    merged[key] = value
    return services


def compose_environment(service: dict[str, Any]) -> dict[str, str]:
    environment = service.get("environment", {})
    if isinstance(environment, list):
        return dict(entry.split("=", 1) for entry in environment)
    return {key: str(value) for key, value in environment.items()}


def compose_arena_services(services: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The services of the Card Arena image running ``arena serve`` (its default command), and
    their args."""
    return {
        name: list(service.get("command", ["serve"]))
        for name, service in services.items()
        if service.get("build", {}).get("dockerfile") == "deploy/Dockerfile"
        and "entrypoint" not in service
        and list(service.get("command", ["serve"]))[:1] == ["serve"]
    }


def compose_problems(services: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with the arena processes of a compose project, as a list of sentences.

    Each has a valid role and a stop grace period covering --shutdown-grace-s plus the margin.
    Several share one PostgreSQL database, each with its own worker id and an advertise address
    under its own service name, none scaled to copies (which would share its worker id); one of
    them schedules and one plays.
    """
    problems: list[str] = []
    arena = compose_arena_services(services)
    if not arena:
        return ["no service runs arena serve"]
    roles = []
    for name, args in arena.items():
        service = services[name]
        roles_given = flag_values(args, "--role")
        if len(roles_given) > 1 or not set(roles_given) <= set(ARENA_ROLES):
            problems.append(f"{name}: --role must be one of {ARENA_ROLES}: {roles_given}")
        roles.append(roles_given[0] if roles_given else "all")
        problems += web_listen_problems(args, roles[-1], name)
        if roles[-1] in WEB_ROLES and not any(
            str(mapping).rsplit(":", 1)[-1] == str(WEB_PORT) for mapping in service.get("ports", [])
        ):
            problems.append(f"{name}: serves the web UI but does not publish port {WEB_PORT}")
        grace_given = flag_values(args, "--shutdown-grace-s")
        grace = float(grace_given[-1]) if grace_given else ARENA_DEFAULT_SHUTDOWN_GRACE_S
        stop = service.get("stop_grace_period")
        stop_s = compose_duration_s(stop) if stop else COMPOSE_DEFAULT_STOP_GRACE_S
        if stop_s < grace + SHUTDOWN_MARGIN_S:
            problems.append(
                f"{name}: stop_grace_period {stop_s:g} s < --shutdown-grace-s {grace:g} + "
                f"{SHUTDOWN_MARGIN_S:g} s margin"
            )
    problems += roles_problems(roles, "this project")
    if len(arena) == 1:
        return problems
    worker_ids: dict[str, str] = {}
    databases = set()
    for name, args in arena.items():
        service = services[name]
        ids = flag_values(args, "--worker-id") or [
            compose_environment(service).get(WORKER_ID_ENV, "")
        ]
        if not ids[-1]:
            problems.append(f"{name}: no worker id ({WORKER_ID_ENV} or --worker-id)")
        elif ids[-1] in worker_ids:
            problems.append(f"{name}: worker id {ids[-1]!r} is {worker_ids[ids[-1]]}'s too")
        else:
            worker_ids[ids[-1]] = name
        if service.get("deploy", {}).get("replicas", 1) != 1 or "scale" in service:
            problems.append(f"{name}: copies of one service share its worker id")
        (listen,) = flag_values(args, "--listen") or ["127.0.0.1:50050"]
        port = listen.rsplit(":", 1)[1]
        if flag_values(args, "--advertise-address") != [f"{name}:{port}"]:
            problems.append(f"{name}: --advertise-address must be {name}:{port}")
        urls = flag_values(args, "--database-url")
        if not urls:
            problems.append(f"{name}: several arena processes need --database-url (PostgreSQL)")
        databases.update(urls)
    if len(databases) > 1:
        problems.append(f"the arena processes use {len(databases)} databases, not one")
    return problems


def prometheus_targets(config: Path, job: str = "cardarena") -> set[str]:
    (scrape,) = [j for j in load_yaml(config)["scrape_configs"] if j["job_name"] == job]
    return {target for static in scrape["static_configs"] for target in static["targets"]}


def compose_metrics_targets(services: dict[str, dict[str, Any]]) -> set[str]:
    """``service:port`` of every arena process's /metrics."""
    targets = set()
    for name, args in compose_arena_services(services).items():
        (listen,) = flag_values(args, "--metrics-listen") or ["127.0.0.1:9464"]
        targets.add(f"{name}:{listen.rsplit(':', 1)[1]}")
    return targets


@pytest.mark.parametrize(
    "files", [(COMPOSE,), (COMPOSE, COMPOSE_SCALE_OUT)], ids=["single", "scale-out"]
)
def test_compose_arena_processes_have_identities_and_drain_cleanly(files: tuple[Path, ...]) -> None:
    assert compose_problems(compose_services(*files)) == []


def test_compose_scale_out_runs_every_role_and_prometheus_scrapes_each_process() -> None:
    services = compose_services(COMPOSE, COMPOSE_SCALE_OUT)
    arena = compose_arena_services(services)
    roles = sorted(flag_values(args, "--role")[0] for args in arena.values())
    assert roles == ["api", "referee", "referee", "scheduler"]
    assert (
        "--config.file=/etc/prometheus/prometheus-scale-out.yml"
        in services["prometheus"]["command"]
    )
    config = PROMETHEUS_DIR / "prometheus-scale-out.yml"
    assert prometheus_targets(config) == compose_metrics_targets(services)
    assert prometheus_targets(PROMETHEUS_DIR / "prometheus.yml") == compose_metrics_targets(
        compose_services(COMPOSE)
    )


def compose_mistake(
    service: str, key: str, value: Any
) -> Callable[[dict[str, dict[str, Any]]], None]:
    def mutate(services: dict[str, dict[str, Any]]) -> None:
        services[service][key] = value

    return mutate


def compose_arg(
    service: str, prefix: str, *new: str
) -> Callable[[dict[str, dict[str, Any]]], None]:
    def mutate(services: dict[str, dict[str, Any]]) -> None:
        command = services[service]["command"]
        command[:] = [a for a in command if not a.startswith(prefix)] + list(new)

    return mutate


COMPOSE_MISTAKES: list[tuple[str, Callable[[dict[str, dict[str, Any]]], None], str]] = [
    (
        "shared worker id",
        compose_mistake("arena-referee-2", "environment", {WORKER_ID_ENV: "arena-referee-1"}),
        "is arena-referee-1's too",
    ),
    ("no worker id", compose_mistake("arena-referee-2", "environment", {}), "no worker id"),
    (
        "scaled",
        compose_mistake("arena-referee-2", "deploy", {"replicas": 2}),
        "share its worker id",
    ),
    (
        "wrong advertise",
        compose_arg(
            "arena-referee-2", "--advertise-address", "--advertise-address=arena-referee-1:50050"
        ),
        "must be arena-referee-2:50050",
    ),
    (
        "default stop grace",
        compose_mistake("arena-scheduler", "stop_grace_period", None),
        "stop_grace_period 10 s",
    ),
    (
        "sqlite",
        compose_arg("arena-referee-1", "--database-url", "--db=/var/lib/cardarena/arena.sqlite3"),
        "need --database-url",
    ),
    (
        "no scheduler",
        compose_arg("arena-scheduler", "--role", "--role=referee"),
        "no process schedules",
    ),
    ("unknown role", compose_arg("arena-scheduler", "--role", "--role=leader"), "--role must be"),
    ("api without web UI", compose_arg("arena", "--web-listen"), "--web-listen must be"),
    (
        "referee with web UI",
        compose_arg("arena-referee-1", "--web-listen", "--web-listen=0.0.0.0:8080"),
        "serves no web UI",
    ),
    (
        "web port unpublished",
        compose_mistake("arena", "ports", ["127.0.0.1:50050:50050"]),
        "does not publish port 8080",
    ),
]


def dockerfile_instructions(name: str) -> list[str]:
    """The arguments of every ``name`` instruction of deploy/Dockerfile (continuations joined)."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    return [
        line.split(None, 1)[1]
        for line in text.splitlines()
        if line.split(None, 1)[:1] == [name] and len(line.split(None, 1)) == 2
    ]


def test_image_exposes_and_serves_the_web_ui() -> None:
    """The image's default command serves the web UI on every interface at the port it exposes
    (with the API and /metrics), and its health check stays on gRPC health."""
    exposed = {port for line in dockerfile_instructions("EXPOSE") for port in line.split()}
    assert {"50050", "9464", str(WEB_PORT)} <= exposed
    (cmd,) = dockerfile_instructions("CMD")
    args = json.loads(cmd)
    assert args[:1] == ["serve"]
    assert flag_values(args, "--web-listen") == [f"0.0.0.0:{WEB_PORT}"]
    (healthcheck,) = dockerfile_instructions("HEALTHCHECK")
    assert '"arena", "health", "127.0.0.1:50050"' in healthcheck


def test_split_manifest_check_catches_a_web_port_on_a_referee() -> None:
    resources = manifest(SPLIT_ARENA_MANIFEST)
    (referee,) = [d for d in arena_deployments(resources) if "referee" in d["metadata"]["name"]]
    container = arena_container(referee)
    assert container is not None
    container["ports"].append({"name": WEB_PORT_NAME, "containerPort": WEB_PORT})
    assert any("has a web port" in p for p in arena_manifest_problems(resources))


@pytest.mark.parametrize(
    ("mistake", "mutate", "expected"), COMPOSE_MISTAKES, ids=[m[0] for m in COMPOSE_MISTAKES]
)
def test_compose_check_catches(
    mistake: str, mutate: Callable[[dict[str, dict[str, Any]]], None], expected: str
) -> None:
    services = json.loads(json.dumps(compose_services(COMPOSE, COMPOSE_SCALE_OUT)))
    mutate(services)
    problems = compose_problems(services)
    assert any(expected in p for p in problems), f"{mistake}: {problems}"


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
