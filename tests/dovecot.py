"""A throwaway Dovecot IMAP server (Debian's ``dovecot-imapd``) on loopback ports, for the mail-account tests.

Each server has its own configuration, maildirs, a password file and a self-signed certificate (made with
``cryptography``): port ``imap`` speaks plain IMAP with STARTTLS, ``imaps`` TLS from the first byte. Messages
are appended, read and renumbered with ``doveadm`` (the server's own tool), never through semfs's code.
"""

from __future__ import annotations

import datetime as dt
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def dovecot_installed() -> bool:
    return shutil.which("dovecot") is not None and shutil.which("doveadm") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _certificate(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    key_path.chmod(0o600)
    return cert_path, key_path


@dataclass
class Dovecot:
    root: Path
    imap: int
    imaps: int
    cert: Path

    @property
    def conf(self) -> Path:
        return self.root / "dovecot.conf"

    def doveadm(self, *args: str, data: bytes | None = None) -> str:
        done = subprocess.run(
            ["doveadm", "-c", str(self.conf), *args], input=data, capture_output=True, timeout=60, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"doveadm {args[0]}: {done.stderr.decode(errors='replace')[:400]}")
        return done.stdout.decode(errors="replace")

    def deliver(self, user: str, raw: bytes, folder: str = "INBOX") -> None:
        """Put a message in ``folder`` as the server stores it (``doveadm save``), not over IMAP."""
        self.doveadm("save", "-u", user, "-m", folder, data=raw)

    def create_folder(self, user: str, folder: str) -> None:
        self.doveadm("mailbox", "create", "-u", user, folder)

    def uids(self, user: str, folder: str = "INBOX") -> list[int]:
        out = self.doveadm("fetch", "-u", user, "uid", "mailbox", folder, "all")
        return [int(line.split()[1]) for line in out.splitlines() if line.startswith("uid:")]

    def flags(self, user: str, folder: str = "INBOX") -> dict[int, str]:
        out = self.doveadm("-f", "tab", "fetch", "-u", user, "uid flags", "mailbox", folder, "all")
        rows = [line.split("\t") for line in out.splitlines()[1:] if line.strip()]
        return {int(r[0]): (r[1] if len(r) > 1 else "") for r in rows}

    def renumber(self, user: str, folder: str, validity: int) -> None:
        """Give the folder a new UIDVALIDITY, as a server restored from a backup does."""
        self.doveadm("mailbox", "update", "-u", user, "--uid-validity", str(validity), folder)

    def stop(self) -> None:
        pid_file = self.root / "run" / "master.pid"
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text().strip()), signal.SIGTERM)
            except (ProcessLookupError, ValueError):
                pid_file.unlink(missing_ok=True)
            for _ in range(1200):  # a condition with a generous ceiling: the master removes its pid file
                if not pid_file.exists():
                    break
                time.sleep(0.05)
        shutil.rmtree(self.root, ignore_errors=True)


_CONF = """
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = yes
ssl_cert = <{cert}
ssl_key = <{key}
disable_plaintext_auth = no
auth_mechanisms = plain login xoauth2 oauthbearer
passdb {{
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = {root}/oauth2.conf.ext
}}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/home/%u
}}
mail_location = maildir:~/Maildir
first_valid_uid = 0
first_valid_gid = 0
{unprivileged}
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {imap}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {imaps}
  }}
}}
service anvil {{
  chroot =
}}
"""


def start_dovecot(users: dict[str, str], introspection_url: str) -> Dovecot:
    """Start a server in a folder of its own; wait (with a generous ceiling) until its IMAP port answers. The
    folder is traversable by Dovecot's own accounts (pytest's are private to the user running it). ``users``:
    each mailbox's address and password, written before the start (Dovecot caches its password file).
    XOAUTH2 and OAUTHBEARER logins are checked by RFC 7662 token introspection at ``introspection_url``."""
    root = Path(tempfile.mkdtemp(prefix="semfs-dovecot-"))
    root.chmod(0o755)
    for sub in ("run", "state", "home"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "passwd").write_text("".join(f"{u}:{{PLAIN}}{p}\n" for u, p in users.items()))
    cert, key = _certificate(root)
    (root / "oauth2.conf.ext").write_text(
        f"introspection_mode = post\nintrospection_url = {introspection_url}\n"
        "username_attribute = username\nactive_attribute = active\nactive_value = true\n"
    )
    if os.geteuid() == 0:  # mail is owned by an unprivileged account, as Dovecot insists for root
        mail_user, unprivileged = pwd.getpwnam("nobody"), ""
        (root / "home").chmod(0o777)
    else:  # run wholly as the current user
        mail_user = pwd.getpwuid(os.geteuid())
        me = mail_user.pw_name
        unprivileged = f"default_internal_user = {me}\ndefault_login_user = {me}\ndefault_internal_group = {me}"
    imap, imaps = _free_port(), _free_port()
    text = _CONF.format(
        root=root,
        cert=cert,
        key=key,
        uid=mail_user.pw_uid,
        gid=mail_user.pw_gid,
        imap=imap,
        imaps=imaps,
        unprivileged=unprivileged,
    )
    (root / "dovecot.conf").write_text(text)
    subprocess.run(["dovecot", "-c", str(root / "dovecot.conf")], check=True, timeout=60)
    server = Dovecot(root=root, imap=imap, imaps=imaps, cert=cert)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", imap), timeout=5) as s:
                if s.recv(100).startswith(b"* OK"):
                    return server
        except OSError:
            time.sleep(0.1)
    log = (root / "dovecot.log").read_text(errors="replace")[-2000:] if (root / "dovecot.log").exists() else ""
    server.stop()
    raise RuntimeError(f"Dovecot did not answer on port {imap}: {log}")
