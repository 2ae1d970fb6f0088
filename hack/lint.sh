#!/usr/bin/env bash
# lint.sh - the static checks CI runs:
#   1. clang-format: every tracked .c/.h file is formatted (make format fixes it)
#   2. cppcheck: warnings, portability and performance findings fail
#   3. purity: gang/, migrate/ and place/ include only the C standard library
#      and drake's own pure headers (no I/O, no third-party code;
#      docs/ARCHITECTURE.md); tfjob/ includes nothing of the controller;
#      common/ includes only common/
#   4. jansson stays in codec/parser files
#   5. drake serve's flags, README.md, docs/serve.md's flag table and the
#      Helm chart's values agree;
#      the chart's CRD is config/crd's
set -uo pipefail
fail=0
mapfile -t files < <(git ls-files '*.c' '*.h')

echo "lint: clang-format (${#files[@]} files)"
if ! clang-format --dry-run --Werror "${files[@]}" 2>build-lint-format.txt; then
  grep -E '^[^ ].*(warning|error):' build-lint-format.txt | cut -d: -f1 | sort -u | sed 's/^/    needs format: /'
  echo "  run 'make format' to fix"
  fail=1
fi
rm -f build-lint-format.txt

echo "lint: cppcheck"
if ! cppcheck --quiet --error-exitcode=1 --std=c11 --language=c --inline-suppr \
    --enable=warning,portability,performance --suppress=missingIncludeSystem \
    --include=/usr/include/x86_64-linux-gnu/sys/queue.h \
    -I . -D_GNU_SOURCE -DDRAKE_VERSION='"lint"' \
    common extender kube gang migrate place sim kind tfjob pytorchjob reconciler cmd examples/train 2>&1 | sed 's/^/    /'; then
  fail=1
fi

echo "lint: purity of gang/, migrate/ and place/"
std='assert|ctype|errno|float|inttypes|limits|math|stdalign|stdarg|stdbool|stddef|stdint|stdio|stdlib|string|strings'
bad=$(grep -nE '^#include' gang/*.[ch] migrate/*.[ch] place/*.[ch] 2>/dev/null |
  grep -vE "<($std)\.h>" | grep -vE '"(gang|migrate|place)/[a-z_]+\.h"|"common/err\.h"' |
  grep -vE '_test\.c:' || true)
if [ -n "$bad" ]; then
  echo "$bad" | sed 's/^/    impure include: /'
  fail=1
fi
io=$(grep -nE '\b(fopen|fprintf|printf|puts|time|clock_gettime|gettimeofday|rand|random|socket|getenv)\s*\(' \
  gang/*.c migrate/*.c place/*.c 2>/dev/null | grep -vE '_test\.c:' || true)
if [ -n "$io" ]; then
  echo "$io" | sed 's/^/    I\/O or clock in pure code: /'
  fail=1
fi

echo "lint: kind/ and the kinds' folders (the job APIs) use nothing of the controller"
up=$(grep -nE '^#include "(reconciler|extender|sim|cmd)/' kind/*.[ch] tfjob/*.[ch] pytorchjob/*.[ch] 2>/dev/null || true)
if [ -n "$up" ]; then
  echo "$up" | sed 's/^/    reaches up: /'
  fail=1
fi

echo "lint: the controller, gang/ and the simulator name no job kind (kind/job.h)"
named=$(grep -nE '^#include "(tfjob|pytorchjob)/' reconciler/*.[ch] gang/*.[ch] sim/*.[ch] 2>/dev/null |
  grep -vE '_test(util)?\.[ch]:' || true)
if [ -n "$named" ]; then
  echo "$named" | sed 's/^/    names a kind: /'
  fail=1
fi

echo "lint: common/ (the ground floor) includes only common/"
# Every layer may use common/; common/ uses none of them (docs/ARCHITECTURE.md).
reach=$(grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' common/*.[ch] 2>/dev/null |
  grep -vE '#[[:space:]]*include[[:space:]]*"common/[a-z_]+\.h"' || true)
if [ -n "$reach" ]; then
  echo "$reach" | sed 's/^/    common\/ reaches up: /'
  fail=1
fi

echo "lint: jansson only in codec and parser files"
jn=$(git ls-files '*.c' '*.h' | xargs grep -l '#include <jansson.h>' |
  grep -vE '(codec|parse|_test|_fuzz|json|watch|object|tfjob|crd|status)[a-z_]*\.[ch]$' || true)
if [ -n "$jn" ]; then
  echo "$jn" | sed 's/^/    includes jansson: /'
  fail=1
fi

echo "lint: every drake serve flag is in README.md and has a row in docs/serve.md"
if [ -x build/release/drake ]; then
  for f in $(build/release/drake serve --help | grep -oE '^  --[a-z0-9-]+' | sed 's/^ *//'); do
    grep -q -- "\`$f\`" README.md || { echo "    README.md does not mention $f"; fail=1; }
    # the first cell of a row of the flag table names it
    grep -qE -- "^\| [^|]*\`$f\`" docs/serve.md || { echo "    docs/serve.md has no row for $f"; fail=1; }
  done
else
  echo "    (skipped: build/release/drake not built)"
fi

echo "lint: every drake serve flag is a chart value, and every chart flag value a drake serve flag"
# charts/drake/values.yaml names each flag by its camelCase key under
# `flags:` (--gang-bind-timeout: gangBindTimeout), or says with a comment
# line "# flag --name: ..." how the chart sets it. The deployment template
# turns the keys back into --kebab-case, so an unknown key would be an
# unknown flag at drake's start.
values=charts/drake/values.yaml
if [ -x build/release/drake ] && [ -f "$values" ]; then
  mapfile -t dflags < <(build/release/drake serve --help | grep -oE '^  --[a-z0-9-]+' | sed 's/^ *--//')
  mapfile -t ckeys < <(awk '/^flags:/ {in_f = 1; next} /^[^ #]/ {in_f = 0}
    in_f && /^  [a-zA-Z0-9]+:/ {sub(/:.*/, ""); sub(/^ +/, ""); print}' "$values")
  for f in "${dflags[@]}"; do
    camel=$(sed -E 's/-([a-z])/\U\1/g' <<<"$f")
    # a here-string, not a pipe: grep -q stops at the first match, and under
    # pipefail printf's SIGPIPE would make a key that is there look absent
    grep -qx -- "$camel" <<<"$(printf '%s\n' "${ckeys[@]}")" ||
      grep -qE "^ *# +flag --$f:" "$values" ||
      { echo "    $values has neither flags.$camel nor a '# flag --$f:' line"; fail=1; }
  done
  for k in "${ckeys[@]}"; do
    kebab=$(sed -E 's/([A-Z])/-\L\1/g' <<<"$k")
    grep -qx -- "$kebab" <<<"$(printf '%s\n' "${dflags[@]}")" ||
      { echo "    $values: flags.$k is no drake serve flag (--$kebab)"; fail=1; }
  done
else
  echo "    (skipped: build/release/drake not built)"
fi

echo "lint: the chart's CRDs are config/crd's"
for crd in config/crd/kubeflow.org_*.yaml; do
  cmp -s "$crd" "charts/drake/files/${crd##*/}" ||
    { echo "    charts/drake/files/${crd##*/} differs from config/crd/ (copy it)"; fail=1; }
done

[ "$fail" -eq 0 ] && echo "lint: clean"
exit "$fail"
