#!/usr/bin/env bats
# Every code block in docs/ and README.md that is a whole C or C++ file
# (it has an #include) compiles with warnings as errors and, if it has a
# main, links against the built librtl, as a reader would build it.
# Blocks without an #include are excerpts and are not built.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  tmp=$BATS_TEST_TMPDIR
}

# Write each whole-file block to $tmp/blocks/NAME_LINE.{c,cpp}; print their names.
extract() {
  python3 - "$tmp/blocks" "$top/README.md" "$top"/docs/*.md <<'PY'
import os, re, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for path in sys.argv[2:]:
    lines = open(path).read().split("\n")
    lang = None
    for i, line in enumerate(lines, 1):
        m = re.fullmatch(r"```(c|cpp)", line)
        if lang is None and m:
            lang, start, body = m.group(1), i, []
        elif lang is not None and line.startswith("```"):
            if any(l.startswith("#include") for l in body):
                name = f"{os.path.basename(path)[:-3]}_{start}.{lang}"
                open(os.path.join(out, name), "w").write("\n".join(body) + "\n")
                print(name)
            lang = None
        elif lang is not None:
            body.append(line)
PY
}

@test "every whole-file code block in the docs compiles, and links if it is a program" {
  needs_native "built for another machine"
  blocks=$(extract)
  # The ones this test was written for must be among them.
  grep -q '^guide_' <<<"$blocks"
  grep -q '^cpp_' <<<"$blocks"
  grep -q '^README_' <<<"$blocks"
  failed=""
  for b in $blocks; do
    f=$tmp/blocks/$b
    if [[ $b == *.cpp ]]; then cc=(c++ -std=c++17); else cc=(cc -std=gnu11); fi
    if grep -qE '\bmain\(' "$f"; then
      what=(-o "$f.out" -L"$build/core" -lrtl -Wl,-rpath,"$build/core")
    else
      what=(-c -o "$f.o")
    fi
    # make check-sanitize's librtl needs its runtime in the program too.
    # shellcheck disable=SC2086
    if ! "${cc[@]}" ${RTL_SANITIZE_CFLAGS:-} -Wall -Wextra -Werror -I"$top/include" "$f" "${what[@]}" 2>"$tmp/err"; then
      line=${b##*_}
      failed+=$'\n'"${b%_*}.md line ${line%.*}: $(head -n 5 "$tmp/err")"
    fi
  done
  [[ -z $failed ]] || fail "blocks that do not build:$failed"
}

# A pointer into the docs (a file under docs/ and a heading) from code, a
# message, a test or another doc leads to a file and a heading that exist.
@test "every pointer into the docs names a file and a heading that exist" {
  run "$top/scripts/check-doc-refs.py" "$top"
  assert_success
  assert_output ""
}

@test "the doc-pointer check fails on a section that is not there" {
  t=$BATS_TEST_TMPDIR/tree
  mkdir -p "$t/docs" "$t/src"
  printf '# A\n## Signals\n' >"$t/docs"/a.md
  # (docs/ built by printf: this file itself is checked too)
  printf '/* %s/a.md, "Signals" */\n/* %s/a.md, "Forks" */\n/* %s/b.md */\n' docs docs docs >"$t/src/x.c"
  git -C "$t" init -q
  run "$top/scripts/check-doc-refs.py" "$t"
  assert_failure
  d=docs
  assert_output "src/x.c:2: $d/a.md has no section \"Forks\""$'\n'"src/x.c:3: $d/b.md does not exist"
}
