"""The certificate `appliance serve --lan` is served with: made on first start, self-signed,
kept beside the journal; its SHA-256 fingerprint is what the kiosk says and shows, so a
caregiver can check that the page their phone reached is this appliance's."""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

VALID_DAYS = 3650


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path
    fingerprint: str  # SHA-256, as "AB:CD:..."


def lan_address() -> str:
    """This machine's address on the network the default route leaves by. Connecting a UDP
    socket sends nothing; it only asks the kernel which address it would use."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere real
            return str(s.getsockname()[0])
        except OSError:
            return "127.0.0.1"


def certificate(folder: Path, address: str) -> Certificate:
    """The certificate for `address`, made now if there is none for it yet."""
    cert_path, key_path = folder / "web-tls.crt", folder / "web-tls.key"
    if cert_path.exists() and key_path.exists():
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        if ipaddress.ip_address(address) in names.get_values_for_type(x509.IPAddress):
            return Certificate(cert_path, key_path, _fingerprint(cert))
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "appliance")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName([
            x509.IPAddress(ipaddress.ip_address(address)), x509.DNSName(socket.gethostname()),
        ]), critical=False)
        .sign(key, hashes.SHA256())
    )
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return Certificate(cert_path, key_path, _fingerprint(cert))


def _fingerprint(cert: x509.Certificate) -> str:
    return cert.fingerprint(hashes.SHA256()).hex(":").upper()


def spoken_fingerprint(fingerprint: str) -> str:
    """The first 8 hex digits, one by one: enough to check by ear against the phone's view."""
    return " ".join(fingerprint.replace(":", "")[:8])
