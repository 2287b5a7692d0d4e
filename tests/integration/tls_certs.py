"""Throwaway TLS certificates for the tests, made with the `openssl` command: a test CA, server
certificates it signs (two, to test reloading, and one with an encrypted key), a client
certificate it signs, and a rogue CA with a certificate of its own that the test CA does not
trust. EC P-256 keys keep generation fast.
"""

import os
import subprocess
import tempfile

KEY_PASS = "key pass 1"


def _run(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def _key(name, cwd):
    _run("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out",
         name + ".key", cwd=cwd)


def _ca(name, cwd):
    _key(name, cwd)
    _run("req", "-x509", "-new", "-key", name + ".key", "-out", name + ".crt", "-days", "2",
         "-subj", "/CN=ringkv test %s" % name, cwd=cwd)


def _signed(name, ca, cn, cwd):
    _key(name, cwd)
    _run("req", "-new", "-key", name + ".key", "-out", name + ".csr", "-subj", "/CN=%s" % cn,
         cwd=cwd)
    ext = os.path.join(cwd, name + ".ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _run("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key",
         "-CAcreateserial", "-out", name + ".crt", "-days", "2", "-extfile", ext, cwd=cwd)


class Certs:
    """Paths of the generated files: ca, server, server2, client, rogue (.crt/.key each),
    server_enc_key (server's key encrypted with KEY_PASS)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="ringkv-tls-")
        _ca("ca", self.dir)
        _ca("rogueca", self.dir)
        _signed("server", "ca", "ringkv-server", self.dir)
        _signed("server2", "ca", "ringkv-server-reloaded", self.dir)
        _signed("client", "ca", "ringkv-client", self.dir)
        _signed("rogue", "rogueca", "rogue", self.dir)
        _run("pkey", "-in", "server.key", "-aes256", "-passout", "pass:" + KEY_PASS, "-out",
             "server-enc.key", cwd=self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def server_args(self, name="server", auth_clients=None):
        """redis-server / ringkv-server flags naming this CA and the `name` certificate."""
        args = ["--tls-cert-file", self.path(name + ".crt"), "--tls-key-file",
                self.path(name + ".key"), "--tls-ca-cert-file", self.path("ca.crt")]
        if auth_clients:
            args += ["--tls-auth-clients", auth_clients]
        return args

    def cli_args(self, client="client"):
        """redis-cli / redis-benchmark flags for a TLS client with the `client` certificate."""
        args = ["--tls", "--cacert", self.path("ca.crt")]
        if client:
            args += ["--cert", self.path(client + ".crt"), "--key", self.path(client + ".key")]
        return args
