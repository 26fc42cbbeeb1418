"""N replicas of the app behind nginx with session affinity, as plain processes on one machine.

    python -m deploy.replicas                  # 3 replicas on 127.0.0.1:8501-8503, nginx on :8080
    python -m deploy.replicas -n 4 --listen 80
    python -m deploy.replicas -n 4 --print-config > /etc/nginx/conf.d/mlp-playground.conf

Each replica is `streamlit run app.py` on 127.0.0.1; they share one cookie secret
($STREAMLIT_SERVER_COOKIE_SECRET, made up for the run when unset), as Streamlit asks of
replicas. nginx runs in the foreground with deploy/nginx.conf, its replica block written for
these ports, from a folder that keeps its logs (access.log names the replica of each request).
Before starting anything it checks that no other program holds these ports, and refuses if one
does. A replica that exits is started again; Ctrl-C (or SIGTERM) stops everything.
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from deploy.ports import refusal

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(__file__).with_name("nginx.conf")
BLOCK = re.compile(r"(?<=# --- replicas ---\n).*(?=# --- end of replicas ---\n)", re.DOTALL)
LISTEN = re.compile(r"^(\s*)listen \S+;$", re.MULTILINE)
SECRET_VAR = "STREAMLIT_SERVER_COOKIE_SECRET"

# nginx as a plain process: every file it writes stays in its folder (its -p prefix). One worker:
# the replicas, not nginx, are what a class keeps busy, and one worker has one view of which
# replicas are down (each worker keeps its own).
MAIN_CONFIG = """\
daemon off;
worker_processes 1;
pid nginx.pid;
error_log error.log;
events { worker_connections 1024; }
http {
    log_format replicas '$remote_addr [$time_local] "$request" $status replica=$upstream_addr '
                        'cookie=$cookie_mlp_replica';
    access_log access.log replicas;
    # No temp files: run as root, nginx's workers are user nobody, who may not reach this folder
    # (under a 0700 temporary directory, uploads then failed with 500). Request bodies stay in
    # memory up to the largest upload (site.conf's client_max_body_size), responses stream.
    client_body_buffer_size 57m;
    proxy_max_temp_file_size 0;
    client_body_temp_path temp/body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;
    include site.conf;
}
"""


def replica_block(addresses: Sequence[str], affinity: bool = True) -> str:
    """deploy/nginx.conf's replica block for these `host:port`s; without `affinity`, every
    request goes to any replica in turn (round robin: what breaks uploads and downloads)."""
    names = [f"r{i}" for i in range(1, len(addresses) + 1)]
    lines = ["# Each replica's group: the replica, then the others as backups (when it can't be reached)."]
    for name, address in zip(names, addresses, strict=True):
        backups = [f"    server {other} backup;" for other in addresses if other != address]
        lines += [f"upstream mlp_{name} {{", f"    server {address};", *backups, "}"]
    lines += ["# A new visitor (no cookie yet) goes to any replica, in turn.", "upstream mlp_any {"]
    lines += [*(f"    server {address};" for address in addresses), "}", ""]
    if affinity:
        lines.append("# Where a request goes: the group of the replica its cookie names.")
        routes = [f"    {name} mlp_{name};" for name in names]
    else:
        lines.append("# No affinity: every request goes to any replica, whatever its cookie says.")
        routes = []
    lines += ["map $cookie_mlp_replica $mlp_group {", "    default mlp_any;", *routes, "}", ""]
    lines.append("# Which replica answered: the last address nginx tried (after a failover, the backup's).")
    answers = [f"    ~{re.escape(address)}$ {name};" for name, address in zip(names, addresses, strict=True)]
    lines += ["map $upstream_addr $mlp_answered {", '    default "";', *answers, "}", ""]
    return "\n".join(lines)


def site_config(addresses: Sequence[str], listen: int | str, affinity: bool = True) -> str:
    """deploy/nginx.conf for these replicas (`host:port` each), listening on `listen`."""
    site = BLOCK.sub(lambda _: replica_block(addresses, affinity), SITE.read_text(), count=1)
    return LISTEN.sub(lambda m: f"{m[1]}listen {listen};", site, count=1)


def nginx_path() -> str | None:
    """nginx on the PATH, or Debian's (/usr/sbin is on no PATH but root's)."""
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)


def nginx_command(folder: Path, site: str) -> list[str]:
    """Writes nginx's config for `site` into `folder`; the command that runs nginx from there,
    in the foreground, its pid, logs and temp files in `folder` too."""
    nginx = nginx_path() or "nginx"
    (folder / "temp").mkdir(parents=True, exist_ok=True)
    (folder / "site.conf").write_text(site)
    (folder / "nginx.conf").write_text(MAIN_CONFIG)
    return [nginx, "-p", f"{folder}/", "-c", "nginx.conf", "-e", "error.log"]


def start_nginx(folder: Path, site: str) -> subprocess.Popen:
    """nginx with `site`, run from `folder` (nginx_command)."""
    return subprocess.Popen(nginx_command(folder, site), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


def replica_command(port: int) -> list[str]:
    """`streamlit run app.py` for one replica, on 127.0.0.1:`port`: no browser, no file watcher."""
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    command += ["--server.address", "127.0.0.1", "--server.port", str(port)]
    return [*command, "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]


def start_replica(port: int, env: Mapping[str, str], log: Path) -> subprocess.Popen:
    """One replica on 127.0.0.1:`port`, its output appended to `log`."""
    with open(log, "a") as out:
        return subprocess.Popen(replica_command(port), cwd=ROOT, env=dict(env), stdout=out, stderr=out)


def healthy(url: str) -> bool:
    """Whether Streamlit at `url` answers its health check."""
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def wait_healthy(replicas: Mapping[int, subprocess.Popen], timeout: float = 120) -> None:
    """Until every replica (port -> process) answers its health check; RuntimeError if one dies
    or the time runs out."""
    deadline = time.monotonic() + timeout
    waiting = dict(replicas)
    while waiting:
        for port, process in list(waiting.items()):
            if healthy(f"http://127.0.0.1:{port}"):
                del waiting[port]
            elif process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the replica on port {port} did not come up")
        time.sleep(0.3)


def replica_env() -> dict[str, str]:
    """The replicas' environment: this one, with a cookie secret they all share."""
    return {SECRET_VAR: secrets.token_hex(32)} | dict(os.environ)


def stop(processes: Sequence[subprocess.Popen]) -> None:
    """Ask each process to end, then end the ones that don't within 10 s."""
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the replicas and nginx until Ctrl-C (or print the nginx config with --print-config)."""
    parser = argparse.ArgumentParser(prog="python -m deploy.replicas", description=__doc__.split("\n")[0])
    parser.add_argument("-n", "--replicas", type=int, default=3, help="how many app processes (3)")
    parser.add_argument("--first-port", type=int, default=8501, help="the first replica's port (8501)")
    parser.add_argument("--listen", default="8080", help="nginx's port, or address:port (8080)")
    parser.add_argument("--folder", type=Path, help="for nginx's config and the logs (a new temp folder)")
    parser.add_argument("--print-config", action="store_true", help="print the nginx config and exit")
    args = parser.parse_args(argv)
    ports = range(args.first_port, args.first_port + args.replicas)
    site = site_config([f"127.0.0.1:{port}" for port in ports], args.listen)
    if args.print_config:
        print(site, end="")
        return 0
    if (refused := refusal(ports, args.listen)) is not None:  # before anything starts
        print(refused, file=sys.stderr)
        return 2
    folder = args.folder or Path(tempfile.mkdtemp(prefix="mlp-replicas-"))
    folder.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a service manager's stop: clean up too
    env = replica_env()
    replicas = {port: start_replica(port, env, folder / f"replica-{port}.log") for port in ports}
    nginx = None
    try:
        wait_healthy(replicas)
        nginx = start_nginx(folder, site)
        print(f"{args.replicas} replicas behind nginx on {args.listen}; logs in {folder}", flush=True)
        while nginx.poll() is None:  # a replica that exits is started again
            for port, process in replicas.items():
                if process.poll() is not None:
                    print(f"the replica on port {port} exited ({process.returncode}): starting it again")
                    replicas[port] = start_replica(port, env, folder / f"replica-{port}.log")
            time.sleep(1)
        print(f"nginx exited ({nginx.returncode}); see {folder / 'error.log'}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        stop([*replicas.values(), *([nginx] if nginx else [])])


if __name__ == "__main__":
    sys.exit(main())
