"""The deploy files agree with each other: the locks the Dockerfile installs, the compose file and
the Kubernetes manifest against the Dockerfile and deploy/nginx.conf (ports, health checks, the
affinity cookie, upload limits). Docker and Kubernetes can't run here, so these files are parsed,
never started."""

from __future__ import annotations

import re

import pytest
import tomllib
import yaml
from packaging.requirements import Requirement

from deploy.replicas import SITE, main, site_config
from tests.conftest import ROOT

DOCKERFILE = (ROOT / "Dockerfile").read_text()
NGINX = SITE.read_text()
HEALTH = "/_stcore/health"


def locked(path: str) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, sha256 hashes) of every pin in a lock file."""
    text = (ROOT / path).read_text()
    pins = {}
    for block in re.split(r"\n(?=\S)", text):
        if m := re.match(r"([A-Za-z0-9._-]+)==(\S+)", block):
            pins[m[1].lower()] = (m[2], re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return pins


def requirements() -> dict[str, Requirement]:
    """requirements.txt's requirements by name."""
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return {r.name: r for r in (Requirement(line) for line in lines if line.strip() and line[0] != "#")}


def seconds(value: str) -> int:
    """Docker's 30s, 1m as seconds."""
    number, unit = re.fullmatch(r"(\d+)([smh])", value).groups()
    return int(number) * {"s": 1, "m": 60, "h": 3600}[unit]


def dockerfile_port() -> int:
    port = int(re.search(r"^EXPOSE (\d+)$", DOCKERFILE, re.MULTILINE)[1])
    assert f'"--server.port", "{port}"' in DOCKERFILE
    assert f"http://127.0.0.1:{port}{HEALTH}" in DOCKERFILE  # what its HEALTHCHECK asks
    return port


def healthcheck() -> dict[str, str]:
    line = re.search(r"^HEALTHCHECK (.*?) \\$", DOCKERFILE, re.MULTILINE)[1]
    return dict(re.findall(r"--([a-z-]+)=(\S+)", line))


def nginx_upload_mb() -> int:
    return int(re.search(r"client_max_body_size (\d+)m;", NGINX)[1])


def nginx_cookie() -> str:
    return re.search(r'add_header Set-Cookie "(\w+)=\$mlp_answered', NGINX)[1]


# --- the locks ---------------------------------------------------------------------------------


def test_the_lock_pins_every_requirement_exactly_with_hashes():
    pins = locked("requirements.lock")
    for name, (version, hashes) in pins.items():
        assert hashes, f"{name}=={version} has no hash"
    for name, requirement in requirements().items():
        if name != "torch":  # requirements-torch-cpu.lock
            version = pins[name.lower()][0]
            assert requirement.specifier.contains(version), f"{requirement} but {version} is locked"
    assert "torch" not in pins
    assert not [name for name in pins if name.startswith(("nvidia-", "triton", "torchvision"))]


def test_the_packages_app_extra_asks_for_what_requirements_txt_pins():
    """`pip install ".[app]"` gets the Streamlit range the tests pass on, not an older one that
    the app's reach past Streamlit's public API (pages/ui/internals.py) was never tested on."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = {r.name: r for r in map(Requirement, project["optional-dependencies"]["app"])}
    pinned = requirements()
    assert set(extra) == {"streamlit", "threadpoolctl"}
    for name, requirement in extra.items():
        assert requirement.specifier == pinned[name].specifier, (requirement, pinned[name])
    library = {r.name: r for r in map(Requirement, project["dependencies"])}
    for name, requirement in library.items():
        assert requirement.specifier == pinned[name].specifier, (requirement, pinned[name])


def test_the_torch_lock_is_the_cpu_build_from_pytorchs_index():
    text = (ROOT / "requirements-torch-cpu.lock").read_text()
    assert re.search(r"^--index-url https://download\.pytorch\.org/whl/cpu$", text, re.MULTILINE)
    pins = locked("requirements-torch-cpu.lock")
    assert list(pins) == ["torch"]
    version, hashes = pins["torch"]
    assert version == "2.13.0+cpu" and len(hashes) == 2  # x86-64 and arm64
    assert requirements()["torch"].specifier.contains(version)


def test_the_dockerfile_installs_the_locks_and_the_build_context_holds_what_it_copies():
    assert "pip install --no-deps --require-hashes -r /app/requirements-torch-cpu.lock" in DOCKERFILE
    assert "pip install --require-hashes -r /app/requirements.lock" in DOCKERFILE
    assert "requirements.txt" not in DOCKERFILE  # every install is from a lock
    admitted = [
        line[1:].rstrip("/")
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.startswith("!")
    ]
    for copy in re.findall(r"^COPY (.+) \S+$", DOCKERFILE, re.MULTILINE):
        for source in copy.split():
            assert source.rstrip("/") in admitted, f"{source} is copied but .dockerignore leaves it out"
            assert (ROOT / source).exists(), source


# --- compose ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())


def replicas(compose: dict) -> dict[str, dict]:
    return {name: s for name, s in compose["services"].items() if s.get("image") == "mlp-playground"}


def test_compose_builds_the_dockerfiles_image_for_each_replica(compose):
    apps = replicas(compose)
    assert len(apps) >= 2
    port = dockerfile_port()
    for app in apps.values():
        assert (ROOT / "deploy" / app["build"]["context"] / "Dockerfile").resolve() == ROOT / "Dockerfile"
        assert app["expose"] == [str(port)]
        secret = app["environment"]["STREAMLIT_SERVER_COOKIE_SECRET"]
        assert secret.startswith("${STREAMLIT_SERVER_COOKIE_SECRET:?")  # one for all, required
        # every replica shares one PostgreSQL, up before them, with one required password
        assert app["environment"]["MLP_DATABASE_URL"].startswith("postgresql://mlp:${MLP_DB_PASSWORD:?")
        assert app["environment"]["MLP_DATABASE_URL"].endswith("@db:5432/mlp")
        assert app["depends_on"] == {"db": {"condition": "service_healthy"}}
    db = compose["services"]["db"]
    assert db["image"].startswith("postgres:") and db["environment"]["POSTGRES_PASSWORD"].startswith(
        "${MLP_DB_PASSWORD:?"
    )
    assert db["environment"]["POSTGRES_USER"] == "mlp" and db["environment"]["POSTGRES_DB"] == "mlp"
    assert "pg_isready" in " ".join(db["healthcheck"]["test"]) and db["volumes"][0].startswith("rooms:")


def test_compose_nginx_is_deploy_nginx_conf_for_its_replicas(compose):
    apps, port = replicas(compose), dockerfile_port()
    addresses = [f"{app['networks']['mlp']['ipv4_address']}:{port}" for app in apps.values()]
    nginx = compose["services"]["nginx"]
    mount, target = nginx["volumes"][0].split(":")[:2]
    assert target.startswith("/etc/nginx/conf.d/")  # included in the http context
    conf = (ROOT / "deploy" / mount).read_text()
    header, generated = conf.split("\n\n", 1)
    assert generated == site_config(addresses, 8080)
    assert " ".join(addresses) in header.replace("\\\n#      ", "")  # the command that writes it
    assert nginx["ports"] == ["8080:8080"]
    assert {name: d["condition"] for name, d in nginx["depends_on"].items()} == dict.fromkeys(
        apps, "service_healthy"
    )
    subnet = compose["networks"]["mlp"]["ipam"]["config"][0]["subnet"]
    assert all(a.startswith(subnet.rsplit(".", 1)[0] + ".") for a in addresses)


def test_print_config_writes_for_replicas_elsewhere(capsys):
    assert main(["--print-config", "--listen", "80", "--servers", "10.0.0.5:8501", "10.0.0.6:8501"]) == 0
    out = capsys.readouterr().out
    assert out == site_config(["10.0.0.5:8501", "10.0.0.6:8501"], 80)
    assert "~10\\.0\\.0\\.6:8501$ r2;" in out and "listen 80;" in out
    with pytest.raises(SystemExit):
        main(["--servers", "10.0.0.5:8501"])  # the launcher runs its own replicas only
    assert "--servers goes with --print-config" in capsys.readouterr().err


# --- Kubernetes --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def kube() -> dict[str, dict]:
    return {d["kind"]: d for d in yaml.safe_load_all((ROOT / "deploy" / "kubernetes.yaml").read_text())}


def test_kubernetes_pods_run_the_image_as_the_dockerfile_does(kube):
    pod = kube["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["ports"] == [{"name": "http", "containerPort": dockerfile_port()}]
    uid = int(re.search(r"useradd .*--uid (\d+)", DOCKERFILE)[1])
    assert pod["securityContext"] == {"runAsNonRoot": True, "runAsUser": uid}
    env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"] if "valueFrom" in e}
    assert env.keys() == {"STREAMLIT_SERVER_COOKIE_SECRET", "MLP_DATABASE_URL"}  # both from the secret
    assert {ref["name"] for ref in env.values()} == {"mlp-playground"}
    assert kube["Deployment"]["spec"]["replicas"] >= 2


def test_kubernetes_probes_ask_what_the_dockerfiles_healthcheck_asks(kube):
    (container,) = kube["Deployment"]["spec"]["template"]["spec"]["containers"]
    check = healthcheck()
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = container[kind]
        assert probe["httpGet"] == {"path": HEALTH, "port": "http"}, kind
        assert probe["timeoutSeconds"] == seconds(check["timeout"]), kind
    live, start = container["livenessProbe"], container["startupProbe"]
    assert live["periodSeconds"] == seconds(check["interval"])
    assert live["failureThreshold"] == int(check["retries"])
    assert start["periodSeconds"] * start["failureThreshold"] >= seconds(check["start-period"])


def test_kubernetes_ingress_keeps_a_visitor_on_one_pod_as_nginx_does(kube):
    service, ingress = kube["Service"], kube["Ingress"]
    assert service["spec"]["selector"] == kube["Deployment"]["spec"]["selector"]["matchLabels"]
    assert service["spec"]["ports"] == [{"name": "http", "port": dockerfile_port(), "targetPort": "http"}]
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    assert path["backend"]["service"] == {"name": service["metadata"]["name"], "port": {"name": "http"}}
    notes = ingress["metadata"]["annotations"]
    nginx = "nginx.ingress.kubernetes.io/"
    assert notes[nginx + "affinity"] == "cookie"
    assert notes[nginx + "session-cookie-name"] == nginx_cookie()
    assert notes[nginx + "session-cookie-change-on-failure"] == "true"  # the cookie follows a failover
    assert notes[nginx + "proxy-body-size"] == f"{nginx_upload_mb()}m"
    day = re.search(r"proxy_read_timeout (\d+)d;", NGINX)[1]
    assert (
        int(notes[nginx + "proxy-read-timeout"])
        == int(notes[nginx + "proxy-send-timeout"])
        == 86400 * int(day)
    )
    traefik = service["metadata"]["annotations"]
    assert traefik["traefik.ingress.kubernetes.io/service.sticky.cookie.name"] == nginx_cookie()


def test_every_load_balancer_takes_every_upload_streamlit_takes():
    import tomllib  # Python 3.11+, like the tests that read it in tests/test_repo.py

    server = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["server"]
    assert server["maxUploadSize"] < nginx_upload_mb()  # a form's wrapping adds a few hundred bytes


def test_no_access_log_keeps_a_query_and_the_replica_cookie_is_secure_behind_https(compose):
    """No secret of the app's is in a URL; nginx's logs keep no query all the same (an old link
    may still carry one), and the replica cookie is Secure over HTTPS."""
    from deploy.replicas import MAIN_CONFIG

    for text in (SITE.read_text(), (ROOT / "deploy" / "compose-nginx.conf").read_text(), MAIN_CONFIG):
        for fmt in re.findall(r"log_format\s+\w+\s+((?:'[^']*'\s*)+);", text):
            assert not re.search(r"\$(request|request_uri|args|query_string|arg_\w+)\b", fmt), fmt
            assert "$uri" in fmt
    site = SITE.read_text()
    assert re.search(r"^\s*access_log \S+ mlp;$", site, re.MULTILINE)  # the site's own format
    assert 'SameSite=Lax$mlp_secure" always;' in site and '~^https: "; Secure";' in site


def test_the_app_trusts_a_visitors_forwarded_address_from_its_own_proxy_alone(compose, kube):
    """Streamlit's server (uvicorn) reads X-Forwarded-For only from $FORWARDED_ALLOW_IPS: the
    class rooms limit joins by address (mlp/rooms/limits.py)."""
    nginx = compose["services"]["nginx"]["networks"]["mlp"]["ipv4_address"]
    for app in replicas(compose).values():
        assert app["environment"]["FORWARDED_ALLOW_IPS"] == nginx
    env = {
        e["name"]: e.get("value")
        for e in kube["Deployment"]["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["FORWARDED_ALLOW_IPS"] == "*"
    assert (
        kube["Service"]["spec"].get("type", "ClusterIP") == "ClusterIP"
    )  # reached through the Ingress alone
