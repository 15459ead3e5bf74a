#!/usr/bin/env python3
"""The Jinja engine (llm/jinja) against @huggingface/jinja, one feature at a time.

The corpus test (test_jinja_templates.py) renders real chat templates, which
reach only the filters, tests and methods their conversations happen to
need. Here each snippet exercises one part of the language on fixed data
(filters with and without arguments, tests, string and dict methods,
slicing, loops, macros, namespaces, whitespace control, number printing):
`llmrun --template-file S --render DATA.json` must print the reference's
rendering byte for byte, and where the reference refuses, llmrun must
refuse too (exit 1 with a reason). Run from the repository root after
`make host` and `sh tools/install-references.sh`; exit 77 when the binary
or the reference is missing (a failure with CI set, by the runner).
"""
import json
import os
import subprocess
import sys
import tempfile

from check import check, exit_status, missing_prerequisite

LLMRUN = os.environ.get("LLMRUN", "build/host/llmrun")
REFERENCE = "tests/reference/render_template.mjs"
REFERENCE_MODULE = "tests/reference/node_modules/@huggingface/jinja"

DATA = {
    "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"},
                 {"role": "assistant", "content": "Hello."}, {"role": "user", "content": "Bye"}],
    "items": [{"type": "b", "n": 2}, {"type": "a", "n": 1}, {"type": "c"}, {"type": "a", "n": 0}],
    "words": ["b", "A", "a", "c", "b"],
    "nums": [3, -1, 2.5, 0],
    "text": "  Hello World  ",
    "d": {"z": 1, "a": [1, 2], "m": {"k": "v"}},
    "flag": True,
    "nothing": None,
}

SNIPPETS = {
    # filters on lists
    "sort": "{{ words | sort | join(',') }}",
    "sort(reverse)": "{{ words | sort(reverse=true) | join(',') }}",
    "sort(case_sensitive)": "{{ words | sort(case_sensitive=true) | join(',') }}",
    "sort(attribute)": "{{ items | sort(attribute='type') | map(attribute='type') | join(',') }}",
    "sort(attribute, reverse)": "{{ items | sort(attribute='type', reverse=true) | map(attribute='n', default=9)"
                                " | join(',') }}",
    "sort of numbers": "{{ nums | sort | join(' ') }}",
    "map(attribute, default)": "{{ items | map(attribute='n', default=0) | list }}",
    "map without attribute": "{{ items | map('upper') | list }}",
    "selectattr": "{{ items | selectattr('n') | list | length }}",
    "selectattr(test)": "{{ items | selectattr('n', 'defined') | map(attribute='type') | join }}",
    "rejectattr(equalto)": "{{ items | rejectattr('type', 'equalto', 'a') | map(attribute='type') | join }}",
    "unique": "{{ words | unique | join('|') }}",
    "first last length": "{{ words | first }}{{ words | last }}{{ words | length }}",
    "reverse": "{{ words | reverse | join }}",
    "list string": "{{ words | string }}",
    "join(separator)": "{{ words | join(separator='; ') }}",
    "tojson": "{{ d | tojson }}",
    "tojson(indent)": "{{ d | tojson(indent=2) }}",
    "tojson(sort_keys)": "{{ d | tojson(sort_keys=true) }}",
    "tojson of text": "{{ 'a\"b\\tc</s>é😀' | tojson }}",
    "tojson(indent='x')": "{{ d | tojson(indent='x') }}",
    # filters on strings
    "trim upper lower length": "{{ text | trim }}|{{ text | upper }}|{{ text | lower }}|{{ text | length }}",
    "title capitalize": "{{ 'hello wORLD' | title }} {{ 'hELLO' | capitalize }}",
    "indent": "{{ 'a\nb' | indent }}|{{ 'a\nb\n\nc' | indent(2, true, true) }}",
    "replace": "{{ 'x-y-z' | replace('-', '+') }} {{ 'aaa' | replace('a', 'b', 2) }}",
    "int float of text": "{{ '42' | int + 1 }} {{ 'x' | int(7) }} {{ '2.5' | float }} {{ 'y' | float }}",
    "unknown string filter": "{{ 'a' | nosuchfilter }}",
    # filters on numbers, booleans, mappings, undefined
    "abs int float string": "{{ nums[0] | abs }} {{ nums[1] | abs }} {{ nums[2] | int }} {{ nums[2] | string }}"
                            " {{ 3 | float }} {{ -2.5 | int }}",
    "bool filters": "{{ flag | int }} {{ flag | string }} {{ flag | float }}",
    "mapping length items": "{{ d | length }} {{ d | items | list | length }}",
    "default": "{{ nothing | default('none') }}|{{ '' | default('empty', true) }}|{{ missing | default('u') }}"
               "|{{ 0 | default(5) }}",
    "default(boolean='x')": "{{ '' | default('e', 'x') }}",
    # methods
    "strip methods": "[{{ text.strip() }}][{{ text.lstrip() }}][{{ text.rstrip() }}]",
    "split": "{{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }}",
    "startswith endswith": "{{ 'Hello'.startswith('He') }} {{ 'Hello'.endswith('lo') }}",
    "upper lower title methods": "{{ 'aB'.upper() }}{{ 'aB'.lower() }}{{ 'ab cd'.title() }}",
    "dict get keys values": "{{ d.get('z') }} {{ d.get('missing', 5) }} {{ d.keys() | list }}"
                            " {{ d.values() | list | length }}",
    "member access": "{{ d.m.k }} {{ d['a'][1] }} {{ messages[-1].content }}",
    # slicing and operators
    "slices": "{{ words[1:3] }} {{ words[::-1] }} {{ 'abcdef'[1:4] }} {{ 'abcdef'[-2:] }} {{ words[::2] }}",
    "arithmetic": "{{ 7 // 2 }} {{ 7 % 3 }} {{ 2 ** 10 }} {{ 7 / 2 }} {{ -3 // 2 }} {{ 1 + 2 * 3 }}",
    "concatenation": "{{ 'a' ~ 1 ~ true ~ none }} {{ [1, 2] + [3] }}",
    "in and not in": "{{ 'abc' in 'xabcx' }} {{ 'q' not in words }} {{ 'z' in d }}",
    "comparisons": "{{ 1 < 2 and 'b' > 'a' }} {{ not flag or nothing is none }} {{ 1 == 1.0 }}",
    "numbers printed": "{{ 1.0 }} {{ 1e20 }} {{ 0.1 + 0.2 }} {{ 10 / 4 }} {{ 3 * 1.5 }}",
    "range": "{{ range(3) | list }} {{ range(1, 10, 3) | list }}",
    # tests
    "tests": "{{ 3 is odd }} {{ 4 is even }} {{ nothing is none }} {{ words is iterable }} {{ 'x' is string }}"
             " {{ d is mapping }} {{ 1 is number }} {{ missing is defined }} {{ flag is true }}",
    # statements
    "loop variables": "{% for w in words %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}"
                      "{{ loop.length }}{{ loop.revindex }};{% endfor %}",
    "loop previtem nextitem": "{% for w in words %}{{ loop.previtem }}>{{ loop.nextitem }} {% endfor %}",
    "loop filter and else": "{% for w in words if w != 'b' %}{{ w }}{% endfor %}|"
                            "{% for w in [] %}x{% else %}none{% endfor %}",
    "loop over items": "{% for k, v in d | items %}{{ k }}={{ v }};{% endfor %}",
    "namespace": "{% set ns = namespace(c=0) %}{% for i in range(5) %}{% set ns.c = ns.c + i %}{% endfor %}"
                 "{{ ns.c }}",
    "set block": "{% set x %}inner {{ 1 + 1 }}{% endset %}[{{ x }}]",
    "macro": "{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
             "{{ greet('A') }} {{ greet('B', '?') }} {{ greet(name='C', punct='.') }}",
    "if elif else": "{% for m in messages %}{% if m.role == 'system' %}S{% elif m.role == 'user' %}U"
                    "{% else %}A{% endif %}{% endfor %}",
    "inline if": "{{ 'y' if flag else 'n' }}{{ 'y' if nothing else 'n' }}{{ 'only' if false }}",
    "whitespace control": "a  {%- if true -%}  b  {%- endif -%}  c {#- a comment -#}  d\n  {{- ' e' }}",
    "raise_exception": "{{ raise_exception('stop here') }}",
    "unicode case": "{{ 'straße'.upper() }} {{ 'ÉCOLE' | lower }} {{ 'ǅ'.upper() }}{{ 'ǅ'.lower() }}"
                    " {{ 'İ'.lower() | length }} {{ 'ﬁ'.upper() }} {{ 'Ὰͅ'.upper() }}",
    "unicode capitalize": "{{ 'ßa' | capitalize }} {{ 'élan' | capitalize }} {{ '𐐨x' | capitalize }}"
                          " {{ 'ǆx' | capitalize }}",
    "unicode case tests": "{{ 'é' is lower }} {{ 'É' is upper }} {{ '123' is lower }} {{ 'ß' is upper }}",
    "case-insensitive sorts": "{{ ['b', 'É', 'a', 'é', 'B'] | sort | join }} {{ ['ä', 'Z', 'a'] | sort(true) | join }} {{ ['Ω', 'π'] | sort | join }}"
                              " {{ {'b': 1, 'A': 2, 'a': 3} | dictsort | list }}",
    "dictsort by value": "{{ {'x': 'b', 'y': 'A', 'z': 'a'}.dictsort(by='value', reverse=true) | list }}",
}


def main():
    missing = missing_prerequisite(files=[REFERENCE_MODULE], binaries=[LLMRUN], programs=["node"])
    if missing:
        return missing
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "data.json")
        with open(data, "w", encoding="utf-8") as f:
            json.dump(DATA, f, ensure_ascii=False)
        jobs = []
        for i, (name, text) in enumerate(SNIPPETS.items()):
            path = os.path.join(tmp, f"snippet{i}.jinja")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            jobs.append({"template": path, "messages": DATA, "options": []})
        batch = os.path.join(tmp, "jobs.json")
        with open(batch, "w", encoding="utf-8") as f:
            json.dump(jobs, f, ensure_ascii=False)
        r = subprocess.run(["node", REFERENCE, "--batch", batch], capture_output=True, timeout=300)
        if r.returncode != 0:
            check(False, "the reference renders the snippets", r.stderr.decode(errors="replace")[-400:])
            return exit_status()
        refs = json.loads(r.stdout.decode("utf-8"))
        rendered = refused = 0
        for (name, text), job, ref in zip(SNIPPETS.items(), jobs, refs):
            ours = subprocess.run([LLMRUN, "--template-file", job["template"], "--render", data],
                                  capture_output=True, timeout=60)
            err = ours.stderr.decode(errors="replace").strip()
            if ref["ok"]:
                rendered += 1
                want = ref["text"].encode("utf-8")
                check(ours.returncode == 0 and ours.stdout == want, f"{name}: rendered as the reference does",
                      f"{text!r}: ours {ours.stdout!r} (exit {ours.returncode}, {err[-160:]}), "
                      f"reference {want!r}")
            else:
                refused += 1
                check(ours.returncode == 1 and not ours.stdout and "llmrun: " in err,
                      f"{name}: refused as the reference refuses ({ref['error'][:80]})",
                      f"{text!r}: ours exit {ours.returncode}, {ours.stdout[:120]!r}")
        print(f"# {rendered} snippets rendered by the reference, {refused} refused by it")
        check(rendered >= len(SNIPPETS) * 3 // 4, "most snippets are compared, not refused",
              f"{rendered} of {len(SNIPPETS)}")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
