#!/usr/bin/env python3
"""Doxygen's input filter for heed's headers (docs/Doxyfile.in).

heed's headers explain themselves in plain // comments; Doxygen reads only ///. This prints the
header with its comments as Doxygen reads them, line for line (so Doxygen's line numbers stay
right): the opening comment block becomes the file's description, a comment line before a
declaration documents it, and a comment after a member on its line documents that member. A
header that docs/api.md does not list as stable is marked internal in its description.

    doxygen_filter.py docs/api.md nn/linear.h
"""
import os
import re
import sys


def stable_headers(api_md):
    # The stable surface: every <heed/...h> named in api.md's "Stable" section.
    text = open(api_md, encoding="utf-8").read()
    section = text.split("## Stable", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"<heed/([\w/]+\.h)>", section))


def header_name(path, repo):
    # What a user includes after <heed/...>: nn/linear.h for REPO/nn/linear.h, heed.h for
    # REPO/include/heed/heed.h, version.h for the generated BUILD/generated/heed/version.h.
    relative = os.path.relpath(os.path.abspath(path), repo)
    if os.path.basename(os.path.dirname(os.path.abspath(path))) == "heed":
        return os.path.basename(path)
    return relative


def comment_text(text):
    # Angle brackets and backslashes in prose ("<s>", "<name>", "\\u003c") are text, not HTML
    # or commands, outside `code spans`, where Doxygen shows them as they are.
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"([\\<>])", r"\\\1", parts[i])
    return "`".join(parts)


def main():
    api_md, path = sys.argv[1], sys.argv[2]
    lines = open(path, encoding="utf-8").read().split("\n")
    repo = os.path.dirname(os.path.dirname(os.path.abspath(api_md)))
    internal = header_name(path, repo) not in stable_headers(api_md)
    out = []
    in_file_comment = None  # None: not reached; True: inside the opening block; False: past it
    for line in lines:
        stripped = line.strip()
        if stripped == "#pragma once":
            # Doxygen needs no include guard; its line says the opening block is the file's.
            out.append("//! \\file")
            continue
        if in_file_comment is None and stripped.startswith("//"):
            in_file_comment = True
            note = "**Internal** (not part of the stable API, docs/api.md). " if internal else ""
            out.append("//! " + note + comment_text(stripped[2:].strip()))
            continue
        if in_file_comment is None and stripped:
            in_file_comment = False
        if in_file_comment:
            if stripped.startswith("//"):
                out.append("//! " + comment_text(stripped[2:].strip()))
                continue
            in_file_comment = False
        if stripped.startswith("// "):
            indent, text = line.split("// ", 1)
            out.append(indent + "/// " + comment_text(text))
        elif re.search(r"[;,{]\s+// ", line) and not stripped.startswith("//"):
            code, text = re.split(r"(?<=[;,{])\s+// ", line, maxsplit=1)
            out.append(code + "  ///< " + comment_text(text))
        else:
            out.append(line)
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()
