// The completion engine every shell's script runs: one POSIX awk program (mawk, gawk, BSD awk), so bash,
// zsh and fish complete alike and one set of tests covers the logic. Its input is the words of the
// command line (the first `n` lines: the words before the cursor's, then the cursor's word), then the
// table of the command tree (table.ts). It prints one candidate a line, `WORD<TAB>DESCRIPTION`; nothing
// when it has none, and the shell then completes file names (an argument FILE, `--output FILE`).
//
// Table lines, tab-separated (PATH is the command words joined by spaces, empty at the root):
//   c PATH WORD SUMMARY         a subcommand of PATH (`C`: hidden, walked into but never offered)
//   o PATH FLAG TAKES DESC      an option of the command at PATH (TAKES 1: it takes a value); PATH `*`
//                               for the global options every command accepts
//   v PATH FLAG VALUE           a value of that option (an enum's, an output format)
//   a PATH INDEX VALUE          a value of the command's positional argument INDEX (0-based)
//
// Written without single quotes or doubled backslashes, so it sits verbatim in a single-quoted shell
// string (bash, zsh) and in fish's single quotes.
export const ENGINE = `
BEGIN { FS = "\\t" }
NR <= n { W[NR] = $0; next }
$1 == "c" || $1 == "C" { SUB[$2, $3] = 1; if ($1 == "c") { NSUB[$2]++; SUBW[$2, NSUB[$2]] = $3; SUBD[$2, NSUB[$2]] = $4 } next }
$1 == "o" { TAKES[$2, $3] = $4; NOPT[$2]++; OPTF[$2, NOPT[$2]] = $3; OPTD[$2, NOPT[$2]] = $5; next }
$1 == "v" { NVAL[$2, $3]++; VAL[$2, $3, NVAL[$2, $3]] = $4; next }
$1 == "a" { NARGV[$2, $3]++; ARGV2[$2, $3, NARGV[$2, $3]] = $4; next }
function owner(path, flag) {
  if ((path, flag) in TAKES) return path
  if (("*", flag) in TAKES) return "*"
  return ""
}
function takes(path, flag,   o) { o = owner(path, flag); return o != "" && TAKES[o, flag] == 1 }
function starts(s, prefix) { return substr(s, 1, length(prefix)) == prefix }
function out(word, desc, pre) { if (starts(word, pre)) printf "%s\\t%s\\n", word, desc }
function values(path, flag, pre, lead,   o, i) {
  o = owner(path, flag)
  if (o == "") return
  for (i = 1; i <= NVAL[o, flag]; i++) if (starts(VAL[o, flag, i], pre)) printf "%s%s\\t\\n", lead, VAL[o, flag, i]
}
function options(path, pre,   i, f) {
  for (i = 1; i <= NOPT[path]; i++) out(OPTF[path, i], OPTD[path, i], pre)
  for (i = 1; i <= NOPT["*"]; i++) { f = OPTF["*", i]; if (!((path, f) in TAKES)) out(f, OPTD["*", i], pre) }
}
END {
  path = ""; pending = ""; nargs = 0; ended = 0; help = 0
  for (i = 1; i < n; i++) {
    w = W[i]
    if (pending != "") { pending = ""; continue }
    if (ended) { nargs++; continue }
    if (w == "--") { ended = 1; continue }
    if (w ~ /^--./) { if (index(w, "=") == 0 && takes(path, w)) pending = w; continue }
    if (w ~ /^-[^-0-9]/) {
      # Grouped short flags (-qo json): a flag that takes a value ends the group; the rest, or the
      # next word, is its value.
      for (j = 2; j <= length(w); j++) {
        f = "-" substr(w, j, 1)
        if (takes(path, f)) { if (j == length(w)) pending = f; break }
      }
      continue
    }
    if (nargs == 0 && path == "" && w == "help" && !help) { help = 1; continue }
    if (nargs == 0 && ((path, w) in SUB)) { path = (path == "" ? w : path " " w); continue }
    nargs++
  }
  cur = W[n]
  if (pending != "") { values(path, pending, cur, ""); exit }
  if (cur ~ /^--[^=]*=/) {
    eq = index(cur, "=")
    values(path, substr(cur, 1, eq - 1), substr(cur, eq + 1), substr(cur, 1, eq))
    exit
  }
  if (cur ~ /^-/ && !ended && !help) {
    options(path, cur)
    exit
  }
  if (nargs == 0 && !ended) for (i = 1; i <= NSUB[path]; i++) out(SUBW[path, i], SUBD[path, i], cur)
  if (help) exit
  for (i = 1; i <= NARGV[path, nargs]; i++) out(ARGV2[path, nargs, i], "", cur)
}
`;
