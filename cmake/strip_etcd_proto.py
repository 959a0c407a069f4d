"""Copies one of etcd's .proto files without its Go-only annotations (gogoproto options and
google.api HTTP bindings), whose own .proto files Debian does not ship for C++, so protoc
can generate the C++ gRPC client at build time.

    strip_etcd_proto.py IN OUT
"""
import re
import sys


def strip(text):
    text = re.sub(r'import "(gogoproto/gogo|google/api/annotations)\.proto";\n', "", text)
    text = re.sub(r"option \(gogoproto\.[^)]*\) = [^;]*;\n", "", text)
    text = re.sub(r"\s*\[\(gogoproto\.[^\]]*\]", "", text)
    out, i = [], 0
    while True:  # option (google.api.http) = { ... { ... } ... };  (braces nest)
        j = text.find("option (google.api.http) = {", i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k, depth = text.index("{", j), 0
        while True:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
            if depth == 0:
                break
        i = text.index(";", k) + 1


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        result = strip(f.read())
    if "gogoproto" in result or "google.api" in result:
        sys.exit(f"strip_etcd_proto: an annotation survived in {sys.argv[1]}")
    with open(sys.argv[2], "w") as f:
        f.write(result)
