"""A POSIX sh subset, parsed: what probes send over ssh (`a; b`, `&&`, `||`, pipes, `for`,
`if`, `$(...)`, quoting, `2>/dev/null`). Not supported: here-docs, functions, `case`, arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OPERATORS = ("&&", "||", ";;", ";", "&", "|", "(", ")", "\n")
KEYWORDS = {"for", "in", "do", "done", "if", "then", "elif", "else", "fi", "while", "{", "}", "!"}


class ShellSyntaxError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of a word: literal text, `$name`, or `$(script)`; quoted or not."""

    kind: str  # "lit" | "param" | "cmd"
    text: str
    quoted: bool


@dataclass(frozen=True, slots=True)
class Word:
    parts: tuple[Part, ...]
    static: tuple[str, ...] | None = field(init=False, compare=False, repr=False)
    """The word's fields when expansion cannot change it (literals only, no unquoted glob
    character, no leading `~`), else None; the interpreter's shortcut past `expand`."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "static", _static(self.parts))

    @property
    def literal(self) -> str | None:
        """The word's text if it is one unquoted literal (keywords, names)."""
        if len(self.parts) == 1 and self.parts[0].kind == "lit" and not self.parts[0].quoted:
            return self.parts[0].text
        return None


def _static(parts: tuple[Part, ...]) -> tuple[str, ...] | None:
    if any(p.kind != "lit" or (not p.quoted and any(c in p.text for c in "*?[")) for p in parts):
        return None
    if parts and not parts[0].quoted and parts[0].text[:1] == "~":
        return None
    if not any(p.quoted or p.text for p in parts):
        return ()
    return ("".join(p.text for p in parts),)


@dataclass(frozen=True, slots=True)
class Redirect:
    fd: int
    op: str  # ">", ">>", "<", ">&"
    target: Word


@dataclass(frozen=True, slots=True)
class Op:
    text: str


Token = Word | Op | Redirect


def _one_of(c: str, chars: str) -> bool:
    return c != "" and c in chars


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def tokens(self) -> list[Token]:
        out: list[Token] = []
        while self.i < len(self.s):
            c = self.peek()
            if c in " \t":
                self.i += 1
            elif c == "\\" and self.peek(1) == "\n":
                self.i += 2
            elif c == "#":
                while self.i < len(self.s) and self.peek() != "\n":
                    self.i += 1
            elif c in "<>":
                out.append(self._redirect(1 if c == ">" else 0))
            elif any(self.s.startswith(op, self.i) for op in OPERATORS):
                op = next(op for op in OPERATORS if self.s.startswith(op, self.i))
                self.i += len(op)
                out.append(Op(op))
            else:
                word = self._word()
                text = word.literal
                if text is not None and text.isdigit() and _one_of(self.peek(), "<>"):
                    out.append(self._redirect(int(text)))
                else:
                    out.append(word)
        return out

    def _redirect(self, fd: int) -> Redirect:
        op = ">>" if self.s.startswith(">>", self.i) else self.peek()
        self.i += len(op)
        if self.peek() == "&" and op == ">":
            op, self.i = ">&", self.i + 1
        while _one_of(self.peek(), " \t"):
            self.i += 1
        return Redirect(fd, op, self._word())

    def _word(self) -> Word:
        parts: list[Part] = []
        buf: list[str] = []

        def flush(quoted: bool) -> None:
            if buf:
                parts.append(Part("lit", "".join(buf), quoted))
                buf.clear()

        while self.i < len(self.s):
            c = self.peek()
            if c in " \t\n;&|()<>":
                break
            if c == "'":
                flush(False)
                end = self.s.find("'", self.i + 1)
                if end < 0:
                    raise ShellSyntaxError("Syntax error: Unterminated quoted string")
                parts.append(Part("lit", self.s[self.i + 1 : end], True))
                self.i = end + 1
            elif c == '"':
                flush(False)
                self.i += 1
                parts += self._double_quoted()
            elif c == "\\":
                flush(False)
                parts.append(Part("lit", self.peek(1), True))
                self.i += 2
            elif c == "$":
                flush(False)
                parts.append(self._dollar(quoted=False))
            else:
                buf.append(c)
                self.i += 1
        flush(False)
        if not parts:
            raise ShellSyntaxError(f"Syntax error: unexpected {self.peek()!r}")
        return Word(tuple(parts))

    def _double_quoted(self) -> list[Part]:
        parts: list[Part] = []
        buf: list[str] = []
        while True:
            c = self.peek()
            if c == "":
                raise ShellSyntaxError("Syntax error: Unterminated quoted string")
            if c == '"':
                self.i += 1
                break
            if c == "\\" and _one_of(self.peek(1), '$`"\\\n'):
                buf.append(self.peek(1))
                self.i += 2
            elif c == "$" and (self.peek(1).isalnum() or _one_of(self.peek(1), "_{(?$#")):
                if buf:
                    parts.append(Part("lit", "".join(buf), True))
                    buf = []
                parts.append(self._dollar(quoted=True))
            else:
                buf.append(c)
                self.i += 1
        if buf or not parts:
            parts.append(Part("lit", "".join(buf), True))
        return parts

    def _dollar(self, quoted: bool) -> Part:
        self.i += 1
        c = self.peek()
        if c == "(":
            depth, j, quote = 1, self.i + 1, ""
            while j < len(self.s) and depth:
                ch = self.s[j]
                if quote:
                    quote = "" if ch == quote else quote
                elif ch in "'\"":
                    quote = ch
                elif ch == "(":
                    depth += 1
                elif ch == ")":
                    depth -= 1
                j += 1
            if depth:
                raise ShellSyntaxError('Syntax error: end of file unexpected (expecting ")")')
            text, self.i = self.s[self.i + 1 : j - 1], j
            return Part("cmd", text, quoted)
        if c == "{":
            end = self.s.find("}", self.i)
            if end < 0:
                raise ShellSyntaxError("Syntax error: Missing '}'")
            name, self.i = self.s[self.i + 1 : end], end + 1
            return Part("param", name, quoted)
        if c and c in "?$#0123456789":
            self.i += 1
            return Part("param", c, quoted)
        j = self.i
        while j < len(self.s) and (self.s[j].isalnum() or self.s[j] == "_"):
            j += 1
        if j == self.i:
            return Part("lit", "$", quoted)
        name, self.i = self.s[self.i : j], j
        return Part("param", name, quoted)


def tokenize(text: str) -> list[Token]:
    return _Lexer(text).tokens()


# -- AST --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Simple:
    assignments: tuple[tuple[str, Word], ...]
    words: tuple[Word, ...]
    redirects: tuple[Redirect, ...]


@dataclass(frozen=True, slots=True)
class Pipeline:
    commands: tuple[Node, ...]
    negate: bool = False


@dataclass(frozen=True, slots=True)
class AndOr:
    first: Pipeline
    rest: tuple[tuple[str, Pipeline], ...]


@dataclass(frozen=True, slots=True)
class Sequence:
    items: tuple[AndOr, ...]


@dataclass(frozen=True, slots=True)
class For:
    var: str
    words: tuple[Word, ...]
    body: Sequence


@dataclass(frozen=True, slots=True)
class If:
    clauses: tuple[tuple[Sequence, Sequence], ...]
    otherwise: Sequence | None


@dataclass(frozen=True, slots=True)
class While:
    condition: Sequence
    body: Sequence


@dataclass(frozen=True, slots=True)
class Group:
    body: Sequence
    redirects: tuple[Redirect, ...] = field(default=())


Node = Simple | For | If | While | Group
