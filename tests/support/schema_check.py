"""The subset of JSON Schema (draft 2020-12) that docs/ptxmm.schema.json uses, as a validator:
``type`` (one or a list), ``enum``, ``const``, ``required``, ``properties``, ``additionalProperties``
(false or a schema), ``items``, ``minItems``/``maxItems``, ``minimum``, ``minLength``, ``oneOf`` and
local ``$ref``s. The jsonschema package is not a dependency of ptxmm's tests (no wheel in the
project's environment); tests/docs/test_json_schema.py holds this validator to it where it is
installed."""

from __future__ import annotations

from typing import Any

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is(value: Any, t: str) -> bool:
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[t])


def errors(value: Any, schema: dict, root: dict | None = None, at: str = "$") -> list[str]:
    """Every place ``value`` breaks ``schema``, as ``path: why``; [] when it is valid."""
    root = root if root is not None else schema
    if "$ref" in schema:
        ref = schema["$ref"]
        assert ref.startswith("#/"), ref
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        return errors(value, target, root, at)
    out: list[str] = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_is(value, t) for t in types):
            return [f"{at}: {value!r:.60} is not of type {'/'.join(types)}"]
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{at}: {value!r:.60} is not one of {schema['enum']}")
    if "const" in schema and value != schema["const"]:
        out.append(f"{at}: {value!r:.60} is not {schema['const']!r}")
    if "oneOf" in schema:
        ok = [s for s in schema["oneOf"] if not errors(value, s, root, at)]
        if len(ok) != 1:
            why = [e for s in schema["oneOf"] for e in errors(value, s, root, at)][:3]
            out.append(f"{at}: matches {len(ok)} of oneOf's schemas, not 1 ({'; '.join(why)})")
    if isinstance(value, dict):
        out += _object(value, schema, root, at)
    if isinstance(value, list):
        out += _array(value, schema, root, at)
    if _is(value, "number") and value < schema.get("minimum", value):
        out.append(f"{at}: {value} < {schema['minimum']}")
    if isinstance(value, str) and len(value) < schema.get("minLength", 0):
        out.append(f"{at}: shorter than {schema['minLength']}")
    return out


def _array(value: list, schema: dict, root: dict, at: str) -> list[str]:
    out = []
    if "items" in schema:
        for i, v in enumerate(value):
            out += errors(v, schema["items"], root, f"{at}[{i}]")
    if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
        out.append(f"{at}: {len(value)} items")
    return out


def _object(value: dict, schema: dict, root: dict, at: str) -> list[str]:
    out = [f"{at}: no `{k}`" for k in schema.get("required", ()) if k not in value]
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for k, v in value.items():
        if k in props:
            out += errors(v, props[k], root, f"{at}.{k}")
        elif extra is False:
            out.append(f"{at}: `{k}` is not in the schema")
        elif isinstance(extra, dict):
            out += errors(v, extra, root, f"{at}.{k}")
    return out
