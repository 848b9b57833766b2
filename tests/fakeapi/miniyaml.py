"""A small YAML reader for the fake's own inputs (image maps, objects to preload from
`kubectl kustomize`): block mappings and sequences (indented or not), plain, quoted and block
(| >) scalars, flow [..] and {..} collections, comments, several documents. No anchors, tags
or complex keys: enough for Kubernetes manifests, not a general YAML parser."""

import json
import re

_INT = re.compile(r"^[-+]?(0|[1-9][0-9]*)$")
_FLOAT = re.compile(r"^[-+]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)([eE][-+]?[0-9]+)?$")


class YamlError(ValueError):
    pass


def load_all(text):
    docs, cur = [], []
    for line in text.split("\n"):
        if re.match(r"^---(\s|$)", line) or line.rstrip() == "...":
            docs.append(cur)
            cur = []
            rest = line[3:].strip() if line.startswith("---") else ""
            if rest and not rest.startswith("#"):
                cur.append(rest)
        else:
            cur.append(line.rstrip("\r"))
    docs.append(cur)
    out = []
    for lines in docs:
        p = _Parser(lines)
        i = p.skip(0)
        if i >= len(lines):
            continue
        val, i = p.block(i, p.indent(i))
        if p.skip(i) < len(lines):
            raise YamlError("unexpected content at line %d: %r" % (i + 1, lines[p.skip(i)]))
        out.append(val)
    return out


def load(text):
    """One document, or a List of all of them when there are several."""
    docs = load_all(text)
    if not docs:
        return None
    if len(docs) == 1:
        return docs[0]
    return {"apiVersion": "v1", "kind": "List", "items": [d for d in docs if d is not None]}


def _strip_comment(s):
    q = None
    for i, ch in enumerate(s):
        if q:
            if ch == q:
                q = None
        elif ch in "'\"" and (i == 0 or s[i - 1] in " [{,:"):
            q = ch
        elif ch == "#" and (i == 0 or s[i - 1] in " \t"):
            return s[:i].rstrip()
    return s.rstrip()


def _split_key(s):
    """'key: value' -> (key, value) or None when s is not a mapping entry."""
    if s.startswith(("'", '"')):
        q = s[0]
        j = 1
        while j < len(s):
            if s[j] == q:
                if q == "'" and j + 1 < len(s) and s[j + 1] == "'":
                    j += 2
                    continue
                if q == '"' and s[j - 1] == "\\":
                    j += 1
                    continue
                break
            j += 1
        rest = s[j + 1:]
        if rest.startswith(":") and (len(rest) == 1 or rest[1] in " \t"):
            return scalar(s[:j + 1]), rest[1:].strip()
        return None
    m = re.match(r"^([^#{}\[\],][^:]*?|[^\s:][^:]*?)\s*:(\s+|$)(.*)$", s)
    if not m or s.startswith(("- ", "-\t")) or s == "-":
        return None
    return m.group(1).strip(), m.group(3)


def scalar(s):
    s = s.strip()
    if s == "" or s in ("~", "null", "Null", "NULL"):
        return None
    if s[0] == '"':
        try:
            return json.loads(s.replace("\\/", "/"))
        except ValueError:
            raise YamlError("bad double-quoted string %r" % s)
    if s[0] == "'":
        if not s.endswith("'") or len(s) < 2:
            raise YamlError("bad single-quoted string %r" % s)
        return s[1:-1].replace("''", "'")
    if s[0] in "[{":
        val, rest = _flow(s, 0)
        if s[rest:].strip():
            raise YamlError("trailing text after %r" % s)
        return val
    if s in ("true", "True", "TRUE"):
        return True
    if s in ("false", "False", "FALSE"):
        return False
    if _INT.match(s):
        return int(s)
    if _FLOAT.match(s) and any(c.isdigit() for c in s):
        return float(s)
    return s


def _flow(s, i):
    """Parse a flow collection starting at s[i]; returns (value, index after it)."""
    opener = s[i]
    closer = "]" if opener == "[" else "}"
    items = [] if opener == "[" else {}
    i += 1
    while True:
        while i < len(s) and s[i] in " \t":
            i += 1
        if i >= len(s):
            raise YamlError("unterminated flow collection %r" % s)
        if s[i] == closer:
            return items, i + 1
        # One element: up to a comma or the closer at depth 0.
        if s[i] in "[{":
            val, i = _flow(s, i)
            key = None
        else:
            j, depth, q = i, 0, None
            while j < len(s):
                ch = s[j]
                if q:
                    if ch == q:
                        q = None
                elif ch in "'\"":
                    q = ch
                elif ch in "[{":
                    depth += 1
                elif ch in "]}":
                    if depth == 0:
                        break
                    depth -= 1
                elif ch == "," and depth == 0:
                    break
                j += 1
            elem = s[i:j].strip()
            i = j
            key = None
            if isinstance(items, dict):
                kv = _split_key(elem)
                if kv is None:
                    key, val = scalar(elem), None
                else:
                    key, val = kv[0], scalar(kv[1]) if not kv[1].startswith(("[", "{")) \
                        else _flow(kv[1], 0)[0]
            else:
                val = scalar(elem)
        if isinstance(items, dict):
            if key is None:
                raise YamlError("a flow mapping needs key: value pairs: %r" % s)
            items[key] = val
        else:
            items.append(val)
        while i < len(s) and s[i] in " \t":
            i += 1
        if i < len(s) and s[i] == ",":
            i += 1


class _Parser:
    def __init__(self, lines):
        self.lines = lines

    @staticmethod
    def _blank(line):
        s = line.strip()
        return not s or s.startswith("#")

    def skip(self, i):
        while i < len(self.lines) and self._blank(self.lines[i]):
            i += 1
        return i

    def indent(self, i):
        line = self.lines[i]
        if "\t" in line[:len(line) - len(line.lstrip())]:
            raise YamlError("tab indentation at line %d" % (i + 1))
        return len(line) - len(line.lstrip(" "))

    def text(self, i):
        return _strip_comment(self.lines[i].strip())

    def block(self, i, ind):
        i = self.skip(i)
        t = self.text(i)
        if t == "-" or t.startswith("- "):
            return self.seq(i, ind)
        if _split_key(t) is not None:
            return self.mapping(i, ind)
        return scalar(t), i + 1

    def seq(self, i, ind):
        out = []
        while True:
            i = self.skip(i)
            if i >= len(self.lines) or self.indent(i) != ind:
                return out, i
            t = self.text(i)
            if not (t == "-" or t.startswith("- ")):
                return out, i
            rest = t[1:].strip()
            if not rest:
                j = self.skip(i + 1)
                if j < len(self.lines) and self.indent(j) > ind:
                    val, i = self.block(j, self.indent(j))
                else:
                    val, i = None, i + 1
            elif rest == "-" or rest.startswith("- ") or _split_key(rest) is not None:
                # An inline first entry: re-read this line as a block at the item's column.
                line = self.lines[i]
                col = ind + 1 + len(line[ind + 1:]) - len(line[ind + 1:].lstrip(" "))
                self.lines[i] = " " * col + line[col:]
                val, i = self.block(i, col)
            elif rest[0] in "|>":
                val, i = self.block_scalar(i, ind, rest)
            else:
                val, i = scalar(rest), i + 1
            out.append(val)

    def mapping(self, i, ind):
        out = {}
        while True:
            i = self.skip(i)
            if i >= len(self.lines) or self.indent(i) != ind:
                return out, i
            t = self.text(i)
            if t == "-" or t.startswith("- "):
                return out, i
            kv = _split_key(t)
            if kv is None:
                raise YamlError("expected `key: value` at line %d: %r" % (i + 1, t))
            key, rest = kv
            if rest and rest[0] in "|>":
                val, i = self.block_scalar(i, ind, rest)
            elif rest:
                val, i = scalar(rest), i + 1
            else:
                j = self.skip(i + 1)
                if j < len(self.lines) and self.indent(j) > ind:
                    val, i = self.block(j, self.indent(j))
                elif j < len(self.lines) and self.indent(j) == ind and \
                        (self.text(j) == "-" or self.text(j).startswith("- ")):
                    val, i = self.seq(j, ind)
                else:
                    val, i = None, i + 1
            out[key] = val

    def block_scalar(self, i, ind, header):
        m = re.match(r"^([|>])([-+]?)([0-9]?)([-+]?)\s*(#.*)?$", header)
        if not m:
            raise YamlError("bad block scalar header %r at line %d" % (header, i + 1))
        style, chomp = m.group(1), m.group(2) or m.group(4)
        j = i + 1
        body = []
        bind = None
        while j < len(self.lines):
            line = self.lines[j]
            if line.strip() == "":
                body.append("")
                j += 1
                continue
            li = len(line) - len(line.lstrip(" "))
            if bind is None:
                if li <= ind:
                    break
                bind = int(m.group(3)) + ind if m.group(3) else li
            if li < bind:
                break
            body.append(line[bind:])
            j += 1
        # Trailing blank lines belong to chomping, not to the next key.
        n = len(body)
        while n and body[n - 1] == "":
            n -= 1
        trailing = len(body) - n
        lines = body[:n]
        if style == "|":
            text = "\n".join(lines)
        else:
            text, prev_blank = "", True
            for ln in lines:
                if ln == "":
                    text += "\n"
                    prev_blank = True
                elif ln.startswith(" "):
                    text += ("\n" if not prev_blank else "") + ln
                    prev_blank = False
                else:
                    text += ("" if prev_blank else " ") + ln
                    prev_blank = False
        if chomp == "-":
            pass
        elif chomp == "+":
            text += "\n" * (1 + trailing) if lines else "\n" * trailing
        elif lines:
            text += "\n"
        return text, j
