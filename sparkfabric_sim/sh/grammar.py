"""Recursive-descent parser over `parse.tokenize`'s tokens, into the AST of `parse`."""

from __future__ import annotations

import functools
import re

from sparkfabric_sim.sh.parse import (
    AndOr,
    For,
    Group,
    If,
    Node,
    Op,
    Part,
    Pipeline,
    Redirect,
    Sequence,
    ShellSyntaxError,
    Simple,
    Token,
    While,
    Word,
    tokenize,
)

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_STOP = {"then", "do", "done", "fi", "elif", "else", "}"}


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.t = tokens
        self.i = 0

    def peek(self) -> Token | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def keyword(self) -> str | None:
        tok = self.peek()
        return tok.literal if isinstance(tok, Word) else None

    def at_op(self, *ops: str) -> bool:
        tok = self.peek()
        return isinstance(tok, Op) and tok.text in ops

    def expect_keyword(self, word: str) -> None:
        self.skip_newlines()
        if self.keyword() != word:
            got = self.keyword() or (self.peek() and repr(self.peek())) or "end of file"
            raise ShellSyntaxError(f'Syntax error: "{got}" unexpected (expecting "{word}")')
        self.i += 1

    def skip_newlines(self) -> None:
        while self.at_op("\n", ";"):
            self.i += 1

    def sequence(self) -> Sequence:
        items: list[AndOr] = []
        while True:
            self.skip_newlines()
            tok = self.peek()
            if tok is None or self.keyword() in _STOP or self.at_op(")"):
                break
            items.append(self.and_or())
            if self.at_op("&"):
                self.i += 1
        return Sequence(tuple(items))

    def and_or(self) -> AndOr:
        first = self.pipeline()
        rest: list[tuple[str, Pipeline]] = []
        while self.at_op("&&", "||"):
            op = self.t[self.i]
            assert isinstance(op, Op)
            self.i += 1
            while self.at_op("\n"):
                self.i += 1
            rest.append((op.text, self.pipeline()))
        return AndOr(first, tuple(rest))

    def pipeline(self) -> Pipeline:
        negate = False
        if self.keyword() == "!":
            negate, self.i = True, self.i + 1
        commands = [self.command()]
        while self.at_op("|"):
            self.i += 1
            while self.at_op("\n"):
                self.i += 1
            commands.append(self.command())
        return Pipeline(tuple(commands), negate)

    def command(self) -> Node:
        kw = self.keyword()
        if kw == "for":
            return self.for_clause()
        if kw == "if":
            return self.if_clause()
        if kw == "while":
            self.i += 1
            cond = self.sequence()
            self.expect_keyword("do")
            body = self.sequence()
            self.expect_keyword("done")
            return While(cond, body)
        if kw == "{":
            self.i += 1
            body = self.sequence()
            self.expect_keyword("}")
            return Group(body, self.redirects())
        if self.at_op("("):
            self.i += 1
            body = self.sequence()
            if not self.at_op(")"):
                raise ShellSyntaxError('Syntax error: end of file unexpected (expecting ")")')
            self.i += 1
            return Group(body, self.redirects())
        return self.simple()

    def redirects(self) -> tuple[Redirect, ...]:
        out = []
        while isinstance(self.peek(), Redirect):
            tok = self.t[self.i]
            assert isinstance(tok, Redirect)
            out.append(tok)
            self.i += 1
        return tuple(out)

    def simple(self) -> Simple:
        assigns: list[tuple[str, Word]] = []
        words: list[Word] = []
        redirects: list[Redirect] = []
        while True:
            tok = self.peek()
            if isinstance(tok, Redirect):
                redirects.append(tok)
            elif isinstance(tok, Word):
                first = tok.parts[0]
                name, _, _ = first.text.partition("=")
                if (
                    not words
                    and first.kind == "lit"
                    and not first.quoted
                    and "=" in first.text
                    and _NAME.match(name)
                ):
                    value = first.text.partition("=")[2]
                    head = [Part("lit", value, False)] if value else []
                    assigns.append((name, Word((*head, *tok.parts[1:]))))
                else:
                    words.append(tok)
            else:
                break
            self.i += 1
        if not (assigns or words or redirects):
            tok = self.peek()
            what = tok.text if isinstance(tok, Op) else "end of file"
            raise ShellSyntaxError(f'Syntax error: "{what.strip() or "newline"}" unexpected')
        return Simple(tuple(assigns), tuple(words), tuple(redirects))

    def for_clause(self) -> For:
        self.i += 1
        var = self.keyword()
        if var is None or not _NAME.match(var):
            raise ShellSyntaxError("Syntax error: Bad for loop variable")
        self.i += 1
        words: list[Word] = []
        if self.keyword() == "in":
            self.i += 1
            while isinstance(self.peek(), Word):
                tok = self.t[self.i]
                assert isinstance(tok, Word)
                words.append(tok)
                self.i += 1
        self.expect_keyword("do")
        body = self.sequence()
        self.expect_keyword("done")
        return For(var, tuple(words), body)

    def if_clause(self) -> If:
        self.i += 1
        clauses = []
        cond = self.sequence()
        self.expect_keyword("then")
        clauses.append((cond, self.sequence()))
        otherwise = None
        while True:
            self.skip_newlines()
            kw = self.keyword()
            if kw == "elif":
                self.i += 1
                cond = self.sequence()
                self.expect_keyword("then")
                clauses.append((cond, self.sequence()))
            elif kw == "else":
                self.i += 1
                otherwise = self.sequence()
            else:
                break
        self.expect_keyword("fi")
        return If(tuple(clauses), otherwise)


@functools.lru_cache(maxsize=4096)  # the AST is frozen; the suite sends the same scripts often
def parse_script(text: str) -> Sequence:
    p = _Parser(tokenize(text))
    seq = p.sequence()
    if p.peek() is not None:
        tok = p.peek()
        what = tok.text if isinstance(tok, Op) else (p.keyword() or "word")
        raise ShellSyntaxError(f'Syntax error: "{what}" unexpected')
    return seq
