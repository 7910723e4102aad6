#!/usr/bin/env python3
"""A throwaway Kubernetes API stand-in for KubectlCredentialTests: HTTPS on 127.0.0.1 (a
free port, written to DIR/port), with DIR/server.pem and DIR/server.key, asking for an
optional client certificate signed by DIR/client.pem. Every request appends one line to
DIR/requests.log: the path, the Authorization header, and the client certificate's CN.
It answers minimal JSON and exits on its own after 60 seconds."""
import http.server, json, os, ssl, sys, threading

folder = sys.argv[1]

class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        cert = self.connection.getpeercert() or {}
        cn = ""
        for rdn in cert.get("subject", ()):
            for key, value in rdn:
                if key == "commonName":
                    cn = value
        with open(os.path.join(folder, "requests.log"), "a") as log:
            log.write("%s auth=%s cn=%s\n" % (self.path, self.headers.get("Authorization", "-"), cn or "-"))
        if self.headers.get("Authorization") is None and not cn:
            body = json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Unauthorized", "code": 401}).encode()
            self.send_response(401)
        else:
            body = json.dumps({"major": "1", "minor": "20", "gitVersion": "v1.20.2"}).encode()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(os.path.join(folder, "server.pem"), os.path.join(folder, "server.key"))
context.verify_mode = ssl.CERT_OPTIONAL
context.load_verify_locations(os.path.join(folder, "client.pem"))
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
server.socket = context.wrap_socket(server.socket, server_side=True)
with open(os.path.join(folder, "port.tmp"), "w") as f:
    f.write(str(server.server_address[1]))
os.rename(os.path.join(folder, "port.tmp"), os.path.join(folder, "port"))
threading.Timer(60, lambda: os._exit(0)).start()
server.serve_forever()
