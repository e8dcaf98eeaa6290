"""The manifest of a copy of crates/raypick outside the workspace (bench/ab/run.sh, bench/ab/ir.sh):
renamed, and every `workspace = true` dependency resolved from the root manifest.

    python3 bench/ab/crate_manifest.py ROOT_CARGO_TOML COPY_CARGO_TOML NEW_NAME
"""
import sys, tomllib
root, path, name = sys.argv[1:]
ws = tomllib.load(open(root, "rb"))["workspace"]
crate = tomllib.load(open(path, "rb"))
def dep(key, spec):
    if not (isinstance(spec, dict) and spec.pop("workspace", False)):
        return spec
    base = ws["dependencies"][key]
    base = {"version": base} if isinstance(base, str) else dict(base)
    return {**base, **spec}
def toml(v):
    if isinstance(v, bool): return "true" if v else "false"
    if isinstance(v, str): return '"%s"' % v
    if isinstance(v, list): return "[" + ", ".join(toml(x) for x in v) + "]"
    if isinstance(v, dict): return "{ " + ", ".join(f"{k} = {toml(x)}" for k, x in v.items()) + " }"
    return str(v)
lines = ["[package]", f'name = "{name}"', f'version = "{ws["package"]["version"]}"', f'edition = "{ws["package"]["edition"]}"', "", "[features]"]
lines += [f"{k} = {toml(v)}" for k, v in crate.get("features", {}).items()]
lines += ["", "[dependencies]"]
lines += [f"{k} = {toml(dep(k, v))}" for k, v in crate["dependencies"].items()]
for cfg, table in crate.get("target", {}).items():
    lines += ["", f"[target.'{cfg}'.dependencies]"]
    lines += [f"{k} = {toml(dep(k, v))}" for k, v in table.get("dependencies", {}).items()]
open(path, "w").write("\n".join(lines) + "\n")
