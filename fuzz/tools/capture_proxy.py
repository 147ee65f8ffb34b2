# Capture proxy for fuzz seeds: 127.0.0.1:LISTEN -> 127.0.0.1:TARGET, logging each direction of
# each connection to OUT/connNNNN.{c2s,s2c} (see autobahn_seeds.py).
# Usage: capture_proxy.py LISTEN TARGET OUT [FROM TO]
# FROM/TO: replace this text in client->server bytes after logging them, e.g.
# "Host: 127.0.0.1:39103" "Host: 127.0.0.1:39101" (wstest's fuzzingserver insists that the
# Host port is its own).
import socket, sys, threading, itertools
listen, target, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
counter = itertools.count()
def pipe(src, dst, path):
    with open(path, 'wb') as f:
        while True:
            try:
                d = src.recv(65536)
            except OSError:
                break
            if not d:
                break
            f.write(d)
            if len(sys.argv) > 4: d = d.replace(sys.argv[4].encode(), sys.argv[5].encode())
            try:
                dst.sendall(d)
            except OSError:
                break
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass
ls = socket.socket(); ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(('127.0.0.1', listen)); ls.listen(64)
while True:
    c, _ = ls.accept()
    n = next(counter)
    s = socket.create_connection(('127.0.0.1', target))
    threading.Thread(target=pipe, args=(c, s, f'{out}/conn{n:04d}.c2s'), daemon=True).start()
    threading.Thread(target=pipe, args=(s, c, f'{out}/conn{n:04d}.s2c'), daemon=True).start()
