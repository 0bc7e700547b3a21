# Sourced by the tests that need a git history of their own: makes an empty repository in a
# temporary directory ($repo, removed on exit), with a committer, and enters it.
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
cd "$repo"
git init -q && git config user.email t@t && git config user.name t
