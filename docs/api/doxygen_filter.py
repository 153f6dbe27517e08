#!/usr/bin/env python3
"""Doxygen's input filter for heed's headers (docs/Doxyfile.in).

heed's headers explain themselves in plain // comments; Doxygen reads only ///. This prints the
header with its comments as Doxygen reads them, line for line (so Doxygen's line numbers stay
right): the opening comment block becomes the file's description, a comment line before a
declaration documents it, and a comment after a member on its line documents that member. A
header that docs/api.md does not list as stable is marked internal in its description.

    doxygen_filter.py docs/api.md nn/linear.h
"""
import re
import sys


def stable_headers(api_md):
    # The stable surface: every <heed/...h> named in api.md's "Stable" section.
    text = open(api_md, encoding="utf-8").read()
    section = text.split("## Stable", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"<heed/([\w/]+\.h)>", section))


def header_name(path):
    # nn/linear.h from /repo/nn/linear.h; heed.h from /repo/include/heed/heed.h.
    for root in ("base", "autograd", "io", "nn", "optim", "data", "decode", "viz", "train"):
        marker = "/" + root + "/"
        if marker in path:
            return root + "/" + path.rsplit(marker, 1)[1]
    return path.rsplit("/", 1)[-1]


def main():
    api_md, path = sys.argv[1], sys.argv[2]
    lines = open(path, encoding="utf-8").read().split("\n")
    internal = header_name(path) not in stable_headers(api_md)
    out = []
    in_file_comment = None  # None: not started; True: inside the opening block; False: done
    for line in lines:
        stripped = line.strip()
        if in_file_comment is None and stripped.startswith("//"):
            in_file_comment = True
            note = " **Internal**: not part of the stable API (docs/api.md)." if internal else ""
            out.append("//! \\file" + note + " " + stripped[2:].strip())
            continue
        if in_file_comment is None and stripped and not stripped.startswith("#pragma"):
            in_file_comment = False
        if in_file_comment:
            if stripped.startswith("//"):
                out.append("//! " + stripped[2:].strip())
                continue
            in_file_comment = False
        if stripped.startswith("// "):
            out.append(line.replace("// ", "/// ", 1))
        elif re.search(r"[;,{]\s+// ", line) and not stripped.startswith("//"):
            out.append(re.sub(r"([;,{]\s+)// ", r"\1///< ", line, count=1))
        else:
            out.append(line)
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
