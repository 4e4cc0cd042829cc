#!/usr/bin/env bats
# Names in the report as people expect them (docs/report.md, "Names"): a
# C++ program's sites and frames demangled beside their symbols, with the
# source file:line of each from its debug information (tests/progs/
# cpp_sites.cpp, built with -g); site globs still match the symbols.

bats_require_minimum_version 1.5.0
load helpers

setup() {
  needs_preload
  tmp=$BATS_TEST_TMPDIR
  src=$top/tests/progs/cpp_sites.cpp
}

# cpp_run NAME RULE-LINES...: cpp_sites under a policy of one rule on its
# 104-byte nodes, report $tmp/NAME.json.
cpp_run() {
  local name=$1
  shift
  printf '%s\n' '[rule nodes]' 'size = 104' 'protect = read' \
    'on_write = count, backtrace, grant-rw' "$@" >"$tmp/$name.ini"
  run "$rtlctl" run -c "$tmp/$name.ini" -o "$tmp/$name.json" -- "$PROGS/cpp_sites" 10
  assert_success
  assert_line "10 nodes, sum 45"
}

@test "a C++ program's sites and frames: the symbol, its demangled name and its file:line" {
  cpp_run names
  run python3 - "$tmp/names.json" "$src" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
src = open(sys.argv[2]).read().split("\n")
def line(loc):
    m = re.fullmatch(r"cpp_sites\.cpp:(\d+)", loc)
    assert m, loc
    return src[int(m.group(1)) - 1]
[s] = r["sites"]
assert s["site"] == "cpp_sites!_ZN6shapes9make_nodeEv", s
assert s["demangled"] == "cpp_sites!shapes::make_node()", s
assert "new node" in line(s["source"]), s
[b] = r["backtraces"]
assert b["frames"][0].startswith("cpp_sites!_ZN6shapes5touchINS_4nodeEEEvPT_l+0x"), b
assert b["demangled"][0].startswith(
    "cpp_sites!void shapes::touch<shapes::node>(shapes::node*, long)+0x"), b
assert "t->value[1] = v" in line(b["sources"][0]), b
assert b["demangled"][1].startswith("cpp_sites!main+0x"), b
assert "shapes::touch(" in line(b["sources"][1]), b
# A C name stays as it is.
assert b["demangled"][-1] == b["frames"][-1], b
print("ok")
PY
  assert_output ok
  # The tables and the collapsed stacks show the demangled names.
  # Tables shorten template arguments (--full-names keeps them) and give
  # the site's file:line.
  run "$rtlctl" report "$tmp/names.json"
  assert_line --regexp '^ +0 +10 +10 +1040  cpp_sites!shapes::make_node\(\) \(nodes\) cpp_sites.cpp:[0-9]+$'
  assert_line --partial "cpp_sites!void shapes::touch<>(shapes::node*, long)+0x"
  run "$rtlctl" report --full-names "$tmp/names.json"
  assert_line --partial "cpp_sites!void shapes::touch<shapes::node>(shapes::node*, long)+0x"
  run "$rtlctl" report --folded "$tmp/names.json"
  assert_output --regexp ';cpp_sites!main;cpp_sites!void_shapes::touch<shapes::node>\(shapes::node\*,_long\) 10$'
}

@test "a site glob matches the symbol as the file has it, not the demangled name" {
  cpp_run mangled 'site = *make_node*'
  assert_equal "$(report_get "$tmp/mangled.json" 'r["totals"]["selected"]')" 10
  cpp_run shown 'site = *shapes::make_node*'
  assert_equal "$(report_get "$tmp/shown.json" 'r["totals"]["selected"]')" 0
}

# wrappers_run NAME [RTL-LINES...]: $prog (default cpp_wrappers) 200
# under one rule that takes every block read-only, report $tmp/NAME.json;
# its sites in $sites, a line each: demangled site, regions, line, source.
wrappers_run() {
  local name=$1
  shift
  { printf '%s\n' '[rtl]' "$@"; printf '%s\n' '[rule all]' 'protect = read' \
    'on_write = count, grant-rw'; } >"$tmp/$name.ini"
  run "$rtlctl" run -c "$tmp/$name.ini" -o "$tmp/$name.json" -- "$PROGS/${prog:-cpp_wrappers}" 200
  assert_success
  assert_line "200 strings, 9900 bytes"
  sites=$(python3 -c 'import json, sys
for s in json.load(open(sys.argv[1]))["sites"]:
    print(s["demangled"], s["regions"], s["line"], s["source"])' "$tmp/$name.json")
}

# fill_line PROG-NAME: the line of $sites' fill site is fill's push_back.
fill_line() {
  local fill
  fill=$(grep "^$1!ns::K::fill(int) " <<<"$sites") || fail "no fill site: $sites"
  [[ $fill == "$1!ns::K::fill(int) 209 cpp_wrappers.cpp:"* ]] || fail "$fill"
  local line=${fill#* * cpp_wrappers.cpp:}
  line=${line%% *}
  [[ $line =~ ^[0-9]+$ ]] || fail "$fill"
  sed -n "${line}p" "$top/tests/progs/cpp_wrappers.cpp" | grep -q 'push_back' || fail "$fill"
}

@test "a site is the first frame outside the allocators' wrappers: operator new, std::, site_skip" {
  # std::string's buffers (made in libstdc++) and the vector's (in a
  # std:: template instantiated in the program) are charged to
  # ns::K::fill, with its file:line; my_alloc's blocks to my_alloc until
  # the policy names it a wrapper, then to its caller, ns::use_mine (201:
  # its own calloc too).
  wrappers_run plain
  # 200 strings and the vector's 9 buffers (1, 2, 4 ... 256 strings); its
  # line (after the std:: code inlined there) is fill's push_back.
  fill_line cpp_wrappers
  ! grep -q -E 'std::|libstdc\+\+|operator new' <<<"$sites" || fail "a wrapper is a site: $sites"
  grep -q '^cpp_wrappers!my_alloc 200 ' <<<"$sites" || fail "$sites"
  wrappers_run skip 'site_skip = *!my_alloc'
  grep -q '^cpp_wrappers!ns::use_mine(int) 201 cpp_wrappers.cpp:' <<<"$sites" || fail "$sites"
  ! grep -q 'my_alloc' <<<"$sites" || fail "$sites"
  # A rule's site glob sees the same name.
  printf '%s\n' '[rtl]' 'site_skip = *!my_alloc' '[rule mine]' 'site = *use_mine*' \
    'protect = read' 'on_write = count, grant-rw' >"$tmp/sel.ini"
  run "$rtlctl" run -c "$tmp/sel.ini" -o "$tmp/sel.json" -- "$PROGS/cpp_wrappers" 200
  assert_success
  run python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["totals"]["selected"])' \
    "$tmp/sel.json"
  assert_output 201
}

@test "a function inlined where it allocates is the site, from the debug information" {
  # fill inlined into main: the symbol is main's, the DWARF inline chain
  # (std::string's and the vector's code, then fill) names fill, at its
  # push_back; the report keeps main as the symbol a site glob matches.
  prog=cpp_wrappers_inlined wrappers_run inlined
  fill_line cpp_wrappers_inlined
  ! grep -q '^cpp_wrappers_inlined!main ' <<<"$sites" || fail "$sites"
  run python3 -c 'import json, sys
[s] = [s for s in json.load(open(sys.argv[1]))["sites"] if "fill" in s["site"]]
print(s["site"], s["symbol"])' "$tmp/inlined.json"
  assert_output 'cpp_wrappers_inlined!_ZN2ns1K4fillEi cpp_wrappers_inlined!main'
  # A trap's stack shows the functions inlined at each frame: in the
  # tables (short names), and as frames of their own in --folded.
  prog=cpp_wrappers_inlined wrappers_run stacks 'events = off'
  sed -i 's/^on_write = count, grant-rw$/on_write = count, backtrace, grant-rw/' "$tmp/stacks.ini"
  run "$rtlctl" run -c "$tmp/stacks.ini" -o "$tmp/bt.json" -- "$PROGS/cpp_wrappers_inlined" 200
  assert_success
  python3 "$top/tests/reports/validate.py" "$tmp/bt.json"
  run "$rtlctl" report "$tmp/bt.json"
  assert_line '            cpp_wrappers_inlined!ns::K::fill(int) (inlined)'
  assert_line '            cpp_wrappers_inlined!std::string::basic_string<>(unsigned long, char, std::allocator<> const&) (inlined)'
  run "$rtlctl" report --folded "$tmp/bt.json"
  assert_line --regexp ';cpp_wrappers_inlined!main;cpp_wrappers_inlined!ns::K::fill\(int\);cpp_wrappers_inlined!std::__cxx11::basic_string<.*;libstdc\+\+\.so\.6!std::__cxx11::basic_string<[^;]*_M_construct\(unsigned_long,_char\);[^;]* 200$'
  # Without its debug information, the site is the symbol's.
  cp "$PROGS/cpp_wrappers_inlined" "$tmp/stripped"
  strip --strip-debug "$tmp/stripped"
  run "$rtlctl" run -c "$tmp/inlined.ini" -o "$tmp/stripped.json" -- "$tmp/stripped" 200
  assert_success
  run python3 -c 'import json, sys
print(sorted(s["site"] for s in json.load(open(sys.argv[1]))["sites"]))' "$tmp/stripped.json"
  assert_output --partial "'stripped!main'"
}

@test "tables shorten C++ names: std::string, template arguments elided, operators kept" {
  cpp_run short
  # The report's first site renamed as libstdc++'s own would read.
  python3 - "$tmp/short.json" "$tmp/long.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
s = "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >"
r["sites"][0]["demangled"] = ("libstdc++.so.6!std::vector<%s, std::allocator<%s > >"
    "::_M_realloc_insert<%s >(__gnu_cxx::__normal_iterator<%s*, std::vector<%s > >, %s&&)"
    % (s, s, s, s, s, s))
r["top_regions"][0]["demangled"] = ("x!std::basic_ostream<char, std::char_traits<char> >& "
    "std::operator<< <std::char_traits<char> >(std::basic_ostream<char, "
    "std::char_traits<char> >&, char const*)")
r["top_regions"][1]["demangled"] = "x!a::operator<(a const&) const"
r["top_regions"][2]["demangled"] = "x!f<(b>1)>(int)"
r["top_regions"][3]["demangled"] = "x!g<int(int"
json.dump(r, open(sys.argv[2], "w"))
PY
  run "$rtlctl" report "$tmp/long.json"
  assert_success
  assert_line --partial ' libstdc++.so.6!std::vector<>::_M_realloc_insert<>(__gnu_cxx::__normal_iterator<>, std::string&&) (nodes)'
  assert_line --partial ' x!std::basic_ostream<>& std::operator<< <>(std::basic_ostream<>&, char const*) (nodes)'
  assert_line --partial ' x!a::operator<(a const&) const (nodes)'
  assert_line --partial ' x!f<>(int) (nodes)'
  # Unbalanced: as it is.
  assert_line --partial ' x!g<int(int (nodes)'
  run "$rtlctl" report --full-names "$tmp/long.json"
  assert_line --partial "_M_realloc_insert<std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > >"
  # Machine formats keep the whole name.
  run "$rtlctl" report --json "$tmp/long.json"
  assert_output --partial "_M_realloc_insert<std::__cxx11::basic_string<char"
}

@test "a CPython script's sites are the interpreter's callers of its allocators" {
  needs_preload
  needs_native "python3-dbg is this machine's"
  command -v python3-dbg >/dev/null || fail "python3-dbg is not installed (scripts/deps.sh test installs it)"
  # Debian's python3 has no symbol table; python3-dbg has one. With
  # PYTHONMALLOC=malloc every object comes from malloc, through
  # PyObject_Malloc and the debug hooks (_PyMem_DebugMalloc,
  # _PyMem_RawMalloc): each is charged to the function that made the
  # object.
  printf '%s\n' 'class Node:' '    def __init__(self, v):' '        self.v = v' \
    '        self.items = [v] * 3' 'nodes = [Node(i) for i in range(3000)]' \
    'print(sum(n.v for n in nodes))' >"$tmp/s.py"
  printf '%s\n' '[rule all]' 'size = 16..4096' 'protect = read' \
    'on_write = count, grant-rw' >"$tmp/py.ini"
  PYTHONMALLOC=malloc run "$rtlctl" run -c "$tmp/py.ini" -o "$tmp/py.json" -- python3-dbg "$tmp/s.py"
  assert_success
  assert_line 4498500
  run python3 - "$tmp/py.json" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1]))
sites = {s["site"]: s for s in r["sites"]}
wrappers = [n for n in sites if re.search(r"!(_?PyMem_|_?PyObject_(Malloc|Calloc|Realloc)|gc_alloc)", n)]
assert not wrappers, wrappers
# The Nodes (object_new), their lists (PyList_New), with file:line.
for fn, src in (("object_new", "typeobject.c:"), ("PyList_New", "listobject.c:")):
    s = sites.get("python3-dbg!" + fn) or sites.get("python3.11d!" + fn)
    assert s and s["regions"] >= 3000 and s["line"].startswith(src), (fn, s)
print("ok")
PY
  assert_output ok
}
