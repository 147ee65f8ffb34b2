#!/usr/bin/env python3
"""Turn captured Autobahn|Testsuite traffic into fuzz seeds.

Capture (see capture_proxy.py): run tickwire's echo_server behind the proxy and point
wstest's fuzzingclient at the proxy (client->server bytes: masked frames from Autobahn),
and/or run wstest's fuzzingserver behind the proxy and tickwire's autobahn_client at the
proxy (server->client bytes: unmasked frames from Autobahn). Then:

    autobahn_seeds.py SERVER_CAPTURE_DIR CLIENT_CAPTURE_DIR fuzz/seeds

Each connection's frames (after the HTTP head) become a frame-level seed for
ws_frame_reader and ws_diff_tungstenite (the 9-byte setup block of `Setup::encode_default`
for the receiving role in front), truncated to 4 KiB, duplicates dropped; a few request and
response heads become handshake seeds.
"""
import base64, hashlib, os, sys

LIMIT = 4096
# Setup::encode_default(role): role, no frame/message limits, 16 KiB buffer, chunk seed 7, re-encode 3.
SETUP = {"client": bytes([0, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x40, 7, 3]),
         "server": bytes([1, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x40, 7, 3])}


def head_split(data):
    i = data.find(b"\r\n\r\n")
    return (data[: i + 4], data[i + 4:]) if i >= 0 else (data, b"")


def main(server_dir, client_dir, seeds):
    seen = set()
    counts = {}
    for role, capdir, suffix in (("server", server_dir, ".c2s"), ("client", client_dir, ".s2c")):
        for name in sorted(os.listdir(capdir)):
            if not name.endswith(suffix):
                continue
            with open(os.path.join(capdir, name), "rb") as f:
                _, frames = head_split(f.read())
            frames = frames[:LIMIT]
            digest = hashlib.sha1(role.encode() + frames).hexdigest()
            if not frames or digest in seen:
                continue
            seen.add(digest)
            for target in ("ws_frame_reader", "ws_diff_tungstenite"):
                path = os.path.join(seeds, target, f"autobahn_{role}_{name[:-4]}")
                with open(path, "wb") as f:
                    f.write(SETUP[role] + frames)
            counts[role] = counts.get(role, 0) + 1
    # Handshake heads: the first connection of each capture.
    req, _ = head_split(open(os.path.join(server_dir, "conn0000.c2s"), "rb").read())
    with open(os.path.join(seeds, "ws_handshake_server", "autobahn_request"), "wb") as f:
        f.write(b"\x00" + (8192).to_bytes(2, "little") + req)
    creq, _ = head_split(open(os.path.join(client_dir, "conn0000.c2s"), "rb").read())
    resp, _ = head_split(open(os.path.join(client_dir, "conn0000.s2c"), "rb").read())
    key = next(l.split(b":", 1)[1].strip() for l in creq.split(b"\r\n")
               if l.lower().startswith(b"sec-websocket-key:"))
    with open(os.path.join(seeds, "ws_handshake_client", "autobahn_response"), "wb") as f:
        f.write(b"\x00" + base64.b64decode(key) + (8192).to_bytes(2, "little") + resp)
    print(counts)


if __name__ == "__main__":
    main(*sys.argv[1:4])
