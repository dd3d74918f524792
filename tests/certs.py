"""A self-signed certificate for 127.0.0.1, made at test time (as RouterOS makes its own)."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from pathlib import Path

import pytest


def self_signed(directory: Path) -> tuple[Path, Path]:
    """(key, certificate) PEM files for 127.0.0.1; the certificate is its own CA."""
    key, crt = directory / "key.pem", directory / "cert.pem"
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a test certificate")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(crt), "-days", "1",
         "-subj", "/CN=sparkfabric-test-switch", "-addext", "subjectAltName=IP:127.0.0.1",
         "-addext", "basicConstraints=critical,CA:TRUE"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return key, crt


def server_context(key: Path, crt: Path) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certfile=str(crt), keyfile=str(key))
    return ctx
