#!/usr/bin/env python3
"""AWS's own clients resolving a profile's credentials, for AWSCredentialsTests.

aws_client.py cli PROFILE: runs Debian's `aws configure export-credentials --profile
PROFILE` (what awscli resolved), then `aws sts get-caller-identity --profile PROFILE`
against a local HTTP endpoint that records the request's Authorization header, and prints
one JSON line: the exported credentials, the sts call's exit status, the access key id and
session token its request was signed with, and aws's stderr.
aws_client.py boto3 PROFILE: prints boto3.Session(profile_name=PROFILE).get_credentials()
as one JSON line (or the error).
"""
import http.server
import json
import subprocess
import sys
import threading

REPLY = (b'<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">'
         b'<GetCallerIdentityResult><Arn>arn:aws:iam::123456789012:user/kc</Arn>'
         b'<UserId>AIDKC</UserId><Account>123456789012</Account></GetCallerIdentityResult>'
         b'<ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>')


def cli(profile):
    exported = subprocess.run(
        ["aws", "configure", "export-credentials", "--profile", profile, "--format", "process"],
        capture_output=True, text=True, timeout=40)
    try:
        seen = {"exported": json.loads(exported.stdout)}
    except ValueError:
        seen = {"exported": None}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            auth = self.headers.get("Authorization", "")
            if "Credential=" in auth:
                seen["key"] = auth.split("Credential=", 1)[1].split("/", 1)[0]
            seen["token"] = self.headers.get("X-Amz-Security-Token")
            self.send_response(200)
            self.send_header("Content-Type", "text/xml")
            self.send_header("Content-Length", str(len(REPLY)))
            self.end_headers()
            self.wfile.write(REPLY)

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        done = subprocess.run(
            ["aws", "sts", "get-caller-identity", "--profile", profile, "--region", "us-east-1",
             "--endpoint-url", "http://127.0.0.1:%d" % server.server_address[1], "--output", "json"],
            capture_output=True, text=True, timeout=40)
    finally:
        server.shutdown()
    print(json.dumps({"exported": seen["exported"], "export_stderr": exported.stderr,
                      "status": done.returncode, "key": seen.get("key"), "token": seen.get("token"),
                      "stdout": done.stdout, "stderr": done.stderr}))


def boto(profile):
    import boto3
    try:
        c = boto3.Session(profile_name=profile).get_credentials()
        frozen = c.get_frozen_credentials()
        print(json.dumps({"method": c.method, "key": frozen.access_key, "secret": frozen.secret_key,
                          "token": frozen.token}))
    except Exception as e:  # the error is what the test checks
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))


if __name__ == "__main__":
    (cli if sys.argv[1] == "cli" else boto)(sys.argv[2])
