"""N replicas of the app behind nginx with session affinity, as plain processes on one machine.

    python -m deploy.replicas                  # 3 replicas on 127.0.0.1:8501-8503, nginx on :8080
    python -m deploy.replicas -n 4 --listen 80
    python -m deploy.replicas -n 4 --print-config > /etc/nginx/conf.d/mlp-playground.conf
    python -m deploy.replicas --print-config --servers 10.0.0.5:8501 10.0.0.6:8501   # replicas elsewhere

Each replica is `streamlit run app.py` on 127.0.0.1; they share one cookie secret
($STREAMLIT_SERVER_COOKIE_SECRET, made up for the run when unset), as Streamlit asks of
replicas. nginx runs in the foreground with deploy/nginx.conf, its replica block written for
these ports, from a folder that keeps its logs (access.log names the replica of each request).
Before starting anything it checks that no other program holds these ports, and refuses if one
does. nginx routes only to the replicas that proved they are what answers their port
(deploy/supervisor.py): a replica that exits is taken out of nginx's routing (its visitors go to
the others) and started again, later after each failed start, and given up after five in a row.
Ctrl-C (or SIGTERM) stops everything.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection, Sequence
from pathlib import Path

from deploy.ports import listen_address, refusal
from deploy.supervisor import Replicas, healthy

SITE = Path(__file__).with_name("nginx.conf")
BLOCK = re.compile(r"(?<=# --- replicas ---\n).*(?=# --- end of replicas ---\n)", re.DOTALL)
LISTEN = re.compile(r"^(\s*)listen \S+;$", re.MULTILINE)
ACCESS_LOG = re.compile(r"^(\s*)access_log \S+ mlp;$", re.MULTILINE)  # the site's, in its server block
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
    log_format replicas '$remote_addr [$time_local] "$request_method $uri $server_protocol" $status '
                        'replica=$upstream_addr cookie=$cookie_mlp_replica';
    access_log access.log replicas;
    # No temp files: run as root, nginx's workers are user nobody, who may not reach this folder
    # (under a 0700 temporary directory, uploads then failed with 500). Request bodies stay in
    # memory up to the largest upload (site.conf's client_max_body_size), responses stream.
    client_body_buffer_size 59m;
    proxy_max_temp_file_size 0;
    client_body_temp_path temp/body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;
    include site.conf;
}
"""


def replica_block(addresses: Sequence[str], affinity: bool = True, down: Collection[str] = ()) -> str:
    """deploy/nginx.conf's replica block for these `host:port`s; without `affinity`, every
    request goes to any replica in turn (round robin: what breaks uploads and downloads). nginx
    sends nothing to the replicas `down`: their visitors go to the backups."""
    names = [f"r{i}" for i in range(1, len(addresses) + 1)]

    def server(address: str, backup: str = "") -> str:
        return f"    server {address}{backup}{' down' if address in down else ''};"

    lines = ["# Each replica's group: the replica, then the others as backups (when it can't be reached)."]
    for name, address in zip(names, addresses, strict=True):
        backups = [server(other, " backup") for other in addresses if other != address]
        lines += [f"upstream mlp_{name} {{", server(address), *backups, "}"]
    lines += ["# A new visitor (no cookie yet) goes to any replica, in turn.", "upstream mlp_any {"]
    lines += [*(server(address) for address in addresses), "}", ""]
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


def site_config(
    addresses: Sequence[str], listen: int | str, affinity: bool = True, down: Collection[str] = ()
) -> str:
    """deploy/nginx.conf for these replicas (`host:port` each), listening on `listen`; nginx
    sends nothing to those `down`."""
    site = BLOCK.sub(lambda _: replica_block(addresses, affinity, down), SITE.read_text(), count=1)
    return LISTEN.sub(lambda m: f"{m[1]}listen {listen};", site, count=1)


def nginx_path() -> str | None:
    """nginx on the PATH, or Debian's (/usr/sbin is on no PATH but root's)."""
    return shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if Path(p).exists()), None)


def nginx_command(folder: Path, site: str) -> list[str]:
    """Writes nginx's config for `site` into `folder`; the command that runs nginx from there,
    in the foreground, its pid, logs and temp files in `folder` too."""
    nginx = nginx_path() or "nginx"
    (folder / "temp").mkdir(parents=True, exist_ok=True)
    # nginx as a plain process logs into its folder, in MAIN_CONFIG's format (which names the cookie)
    (folder / "site.conf").write_text(
        ACCESS_LOG.sub(lambda m: f"{m[1]}access_log access.log replicas;", site)
    )
    (folder / "nginx.conf").write_text(MAIN_CONFIG)
    return [nginx, "-p", f"{folder}/", "-c", "nginx.conf", "-e", "error.log"]


def start_nginx(folder: Path, site: str) -> subprocess.Popen:
    """nginx with `site`, run from `folder` (nginx_command)."""
    return subprocess.Popen(nginx_command(folder, site), stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)


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
    parser.add_argument(
        "--servers",
        nargs="+",
        metavar="IP:PORT",
        help="with --print-config: replicas run elsewhere (containers, machines), by IP address: "
        "nginx names the replica that answered by its address, never by a host name",
    )
    args = parser.parse_args(argv)
    if args.servers and not args.print_config:
        parser.error("--servers goes with --print-config: the launcher runs its replicas on 127.0.0.1")
    ports = range(args.first_port, args.first_port + args.replicas)
    addresses = args.servers or [f"127.0.0.1:{port}" for port in ports]
    site = site_config(addresses, args.listen)
    if args.print_config:
        print(site, end="")
        return 0
    if (refused := refusal(ports, args.listen)) is not None:  # before anything starts
        print(refused, file=sys.stderr)
        return 2
    folder = args.folder or Path(tempfile.mkdtemp(prefix="mlp-replicas-"))
    folder.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # a service manager's stop: clean up too
    replicas = Replicas(ports, replica_env(), folder)
    nginx = None
    try:
        for port in ports:
            replicas.start(port)
        if (failure := replicas.wait_up()) is not None:
            print(failure, file=sys.stderr)
            return 1
        nginx = start_nginx(folder, site)
        wait_answers(nginx, args.listen)
        if nginx.poll() is None:
            print(f"{args.replicas} replicas behind nginx on {args.listen}; logs in {folder}", flush=True)
        routed = replicas.up()
        while nginx.poll() is None:
            replicas.watch()
            if replicas.up() != routed:  # nginx reloads its config on SIGHUP, keeping open connections
                routed = replicas.up()
                down = [f"127.0.0.1:{port}" for port in ports if port not in routed]
                (folder / "site.conf").write_text(site_config(addresses, args.listen, down=down))
                nginx.send_signal(signal.SIGHUP)
            if replicas.all_given_up():
                print("Every replica was given up: stopping nginx.", file=sys.stderr)
                return 1
            nginx_waits(nginx, 0.5)
        print(f"nginx exited ({nginx.returncode}); see {folder / 'error.log'}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        stop([*replicas.processes(), *([nginx] if nginx else [])])


def nginx_waits(nginx: subprocess.Popen, seconds: float) -> None:
    """Until nginx exits, `seconds` at most."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        nginx.wait(seconds)


def wait_answers(nginx: subprocess.Popen, listen: str, timeout: float = 30) -> None:
    """Until nginx answers on `listen` with a replica's health check, exits, or `timeout` s pass."""
    host, port = listen_address(listen) or ("127.0.0.1", 0)
    url = f"http://[{host}]:{port}" if ":" in host else f"http://{host or '127.0.0.1'}:{port}"
    deadline = time.monotonic() + timeout
    while port and nginx.poll() is None and time.monotonic() < deadline and not healthy(url):
        nginx_waits(nginx, 0.1)


if __name__ == "__main__":
    sys.exit(main())
