"""Prints the version and license of an installed PyPI distribution as JSON (used by collect.mjs)."""

import importlib.metadata as metadata
import json
import sys

name = sys.argv[1]
meta = metadata.metadata(name)
license = meta.get("License-Expression") or meta.get("License")
if not license:
    classifiers = [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    license = "; ".join(c.rsplit(" :: ", 1)[-1] for c in classifiers)
if not license:
    for file in metadata.files(name) or []:
        if "LICENSE" in file.name.upper():
            first = next((l.strip() for l in file.read_text().splitlines() if l.strip()), "")
            license = f"{first} (first line of {file.name})"
            break
print(json.dumps({"version": meta["Version"], "license": license or "not declared"}))
