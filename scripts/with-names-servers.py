#!/usr/bin/env python3
"""with-names-servers.py: the servers scripts/with-names.sh starts as root.

  dns-faults --port-file F --log L: two misbehaving DNS servers on
    127.0.0.1, UDP, on ports the OS picks: "silent" reads every query and
    never answers (a DNS server down behind a firewall that drops);
    "servfail" answers every query with SERVFAIL (rcode 2).  Writes
    "silent PORT" and "servfail PORT" lines to F once both listen, and
    appends one line per query ("silent NAME", "servfail NAME") to L.
  relay --listen ADDR:PORT --target-file F: a TCP relay from ADDR:PORT (a
    privileged port: 443, the one LanceDB Cloud's URLs imply) to the
    127.0.0.1 port that F holds when a connection comes in (a test, which
    runs unprivileged, writes it); a connection is refused while F is
    empty.  Bytes pass untouched (TLS is end to end); an end of stream is
    passed on as one (shutdown), so that a server's close of an idle
    connection reaches the client.

Each stops by itself after --lifetime seconds.  Standard library only.
"""
import argparse
import os
import selectors
import socket
import threading
import time


def qname(packet):
    """The question's name of a DNS query, or "?" when it is malformed."""
    labels, i = [], 12
    try:
        while packet[i]:
            n = packet[i]
            labels.append(packet[i + 1:i + 1 + n].decode("ascii", "replace"))
            i += 1 + n
    except IndexError:
        return "?"
    return ".".join(labels)


def servfail(packet):
    """The SERVFAIL answer to a query: its id and question, QR and RA set."""
    if len(packet) < 12:
        return None
    flags = bytes([0x80 | (packet[2] & 0x79), 0x80 | 2])
    return packet[:2] + flags + packet[4:6] + b"\0\0\0\0\0\0" + packet[12:]


def dns_faults(args, until):
    sel = selectors.DefaultSelector()
    ports = []
    for kind in ("silent", "servfail"):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sel.register(sock, selectors.EVENT_READ, kind)
        ports.append("%s %d\n" % (kind, sock.getsockname()[1]))
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.writelines(ports)
    os.rename(tmp, args.port_file)
    with open(args.log, "a", buffering=1) as log:
        while time.monotonic() < until:
            for key, _ in sel.select(max(0, until - time.monotonic())):
                packet, peer = key.fileobj.recvfrom(4096)
                log.write("%s %s\n" % (key.data, qname(packet)))
                answer = servfail(packet) if key.data == "servfail" else None
                if answer:
                    key.fileobj.sendto(answer, peer)


def pipe(src, dst):
    """Copy src to dst until src's end of stream, then pass it on."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    for sock, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
        try:
            sock.shutdown(how)
        except OSError:
            pass


def relay_one(client, target_file):
    try:
        with open(target_file) as f:
            port = int(f.read().strip())
        upstream = socket.create_connection(("127.0.0.1", port), timeout=5)
        upstream.settimeout(None)
    except (OSError, ValueError):
        client.close()
        return
    ends = [threading.Thread(target=pipe, args=(client, upstream), daemon=True),
            threading.Thread(target=pipe, args=(upstream, client), daemon=True)]
    for t in ends:
        t.start()
    for t in ends:
        t.join()
    client.close()
    upstream.close()


def relay(args, until):
    host, port = args.listen.rsplit(":", 1)
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, int(port)))
    listener.listen(64)
    while time.monotonic() < until:
        listener.settimeout(max(0.1, until - time.monotonic()))
        try:
            client, _ = listener.accept()
        except socket.timeout:
            continue
        client.settimeout(None)
        threading.Thread(target=relay_one, args=(client, args.target_file),
                         daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=("dns-faults", "relay"))
    ap.add_argument("--port-file")
    ap.add_argument("--log")
    ap.add_argument("--listen")
    ap.add_argument("--target-file")
    ap.add_argument("--lifetime", type=float, default=3600)
    args = ap.parse_args()
    until = time.monotonic() + args.lifetime
    if args.what == "dns-faults":
        dns_faults(args, until)
    else:
        relay(args, until)


if __name__ == "__main__":
    main()
