#!/bin/sh
# Stages a runtime skill (a skill.md under tools/<name>/: untrusted, fenced skill:<name>), and
# answers with one tool manifest for mur to write to tools/shout/murmur.yaml.
cat >/dev/null
mkdir -p "$MURMUR_WORKDIR/tools/release-notes"
cat >"$MURMUR_WORKDIR/tools/release-notes/skill.md" <<'NOTES'
# Release notes, fetched at staging

Version 2 renames the config key.
NOTES
cat <<'ANSWER'
{"write_manifests": [{"binary_name": "shout",
  "content": "description: Upper-case the call's input\ncommand: [tr, a-z, A-Z]\n"}]}
ANSWER
