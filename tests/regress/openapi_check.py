#!/usr/bin/env python3
"""openapi_check: checks real HTTP responses against web/openapi.json.

Only the standard library: it walks the subset of OpenAPI 3.0 schemas the
document uses ($ref, type, nullable, enum, required, properties,
additionalProperties, items, minItems, maxItems, minimum, maximum, pattern,
format date-time). An object property the schema does not name is an error
unless additionalProperties allows it, so the document cannot fall behind
the code.

  openapi_check.py SPEC LIST
      LIST has one response per line: METHOD PATH-TEMPLATE STATUS FILE
      (FILE is the body; "-" for none). Every (path, method) in the
      document must appear at least once, and every status must be
      documented for its operation; an error from an operation the
      document does not have (404, 405) must still be an Error object. Prints one line per response and a
      summary; exits 1 on any error.
"""
import json
import re
import sys

DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")


class Checker:
    def __init__(self, spec):
        self.spec = spec
        self.errors = []

    def resolve(self, node):
        while isinstance(node, dict) and "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/"):
                raise ValueError("only local $ref is supported: " + ref)
            node = self.spec
            for part in ref[2:].split("/"):
                node = node[part]
        return node

    def fail(self, where, msg):
        self.errors.append("%s: %s" % (where or "$", msg))

    def check(self, schema, value, where=""):
        schema = self.resolve(schema)
        if schema is True or schema == {}:
            return
        if value is None:
            if not schema.get("nullable") and "type" in schema:
                self.fail(where, "null where %s is required" % schema["type"])
            return
        kind = schema.get("type")
        ok = {
            None: True,
            "object": isinstance(value, dict),
            "array": isinstance(value, list),
            "string": isinstance(value, str),
            "boolean": isinstance(value, bool),
            "integer": isinstance(value, int) and not isinstance(value, bool),
            "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        }.get(kind)
        if ok is None:
            self.fail(where, "the schema has an unknown type %r" % kind)
            return
        if not ok:
            self.fail(where, "%s where %s is required" % (type(value).__name__, kind))
            return
        if "enum" in schema and value not in schema["enum"]:
            self.fail(where, "%r is not one of %r" % (value, schema["enum"]))
        if kind in ("integer", "number"):
            if "minimum" in schema and value < schema["minimum"]:
                self.fail(where, "%r is below %r" % (value, schema["minimum"]))
            if "maximum" in schema and value > schema["maximum"]:
                self.fail(where, "%r is above %r" % (value, schema["maximum"]))
        if kind == "string":
            if "pattern" in schema and not re.search(schema["pattern"], value):
                self.fail(where, "%r does not match %s" % (value, schema["pattern"]))
            if schema.get("format") == "date-time" and not DATE_TIME.match(value):
                self.fail(where, "%r is not an RFC 3339 date-time" % value)
        if kind == "array":
            if len(value) < schema.get("minItems", 0):
                self.fail(where, "fewer than %d items" % schema["minItems"])
            if "maxItems" in schema and len(value) > schema["maxItems"]:
                self.fail(where, "more than %d items" % schema["maxItems"])
            if "items" in schema:
                for i, item in enumerate(value):
                    self.check(schema["items"], item, "%s[%d]" % (where, i))
        if kind == "object" or "properties" in schema:
            self.check_object(schema, value, where)

    def check_object(self, schema, value, where):
        props = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                self.fail(where, "required property %r is missing" % name)
        extra = schema.get("additionalProperties", True)
        for name, item in value.items():
            sub = "%s.%s" % (where, name) if where else name
            if name in props:
                self.check(props[name], item, sub)
            elif extra is False:
                self.fail(sub, "a property the document does not describe")
            elif isinstance(extra, dict):
                self.check(extra, item, sub)

    def response(self, method, template, status, body):
        where = "%s %s %s" % (method, template, status)
        op = self.spec["paths"].get(template, {}).get(method.lower())
        if op is None and int(status) >= 400:
            # A path or method the API does not have: still a JSON error.
            content = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
        elif op is None:
            return ["%s: the document has no such operation" % where]
        elif str(status) not in op["responses"]:
            return ["%s: status %s is not documented" % (where, status)]
        else:
            content = self.resolve(op["responses"][str(status)]).get("content", {})
        mime = next((m for m in ("application/json", "application/problem+json") if m in content), None)
        if mime is None:
            return []
        if body is None:
            return ["%s: no body, but the document describes JSON" % where]
        try:
            value = json.loads(body)
        except ValueError as e:
            return ["%s: the body is not JSON: %s" % (where, e)]
        self.errors = []
        self.check(content[mime]["schema"], value)
        return ["%s: %s" % (where, e) for e in self.errors]


def error_docs(spec):
    """The document describes errors as the server sends them: RFC 9457
    problem details (application/problem+json, the Problem schema) for
    every 4xx and 5xx response, and its prose says so."""
    errors = []
    resolve = Checker(spec).resolve
    text = spec["info"].get("description", "")
    if "RFC 9457" not in text or "application/problem+json" not in text:
        errors.append("info.description does not describe errors as RFC 9457 problem details")
    for template, ops in sorted(spec["paths"].items()):
        for method, op in ops.items():
            for status, resp in op.get("responses", {}).items():
                if not status[0] in "45":
                    continue
                content = resolve(resp).get("content", {})
                schema = content.get("application/problem+json", {}).get("schema", {})
                if list(content) != ["application/problem+json"] or \
                        schema.get("$ref") != "#/components/schemas/Problem":
                    errors.append("%s %s %s: not application/problem+json with Problem"
                                  % (method.upper(), template, status))
    return errors


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1]) as f:
        spec = json.load(f)
    checker = Checker(spec)
    seen = set()
    errors = []
    count = 0
    with open(argv[2]) as f:
        for line in f:
            if not line.strip():
                continue
            method, template, status, path = line.split()
            body = None
            if path != "-":
                with open(path, encoding="utf-8") as b:
                    body = b.read()
            found = checker.response(method, template, status, body)
            count += 1
            if method.lower() in spec["paths"].get(template, {}):
                seen.add((template, method.lower()))
            print("%s: %s %s %s" % ("FAIL" if found else "ok", method, template, status))
            errors += found
    for template, ops in sorted(spec["paths"].items()):
        for method in ops:
            if method in ("get", "post", "put", "delete", "patch", "head") and \
                    (template, method) not in seen:
                errors.append("%s %s: documented but never checked" % (method.upper(), template))
    errors += error_docs(spec)
    for e in errors:
        print("error: " + e)
    print("openapi_check: %d responses, %d operations covered, %d errors"
          % (count, len(seen), len(errors)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
