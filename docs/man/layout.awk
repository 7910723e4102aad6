# Lays out the man page swift-argument-parser's generate-manual plugin writes (`make man`
# runs this on it; docs/design.md, "Help text and the man page", says why):
#
# - The plugin writes each command's discussion as plain text lines, which roff fills:
#   examples and the exit-code table ran together, and into the next paragraph. Every run
#   of two or more text lines (a discussion; an abstract is one line) goes into a literal
#   display (.Bd -literal), so it shows line by line as written; an empty line in it
#   becomes \& (an empty input line is an mdoc warning).
# - The plugin lists the subcommands as items of the root's option list, indented twice
#   (13 columns), so 75-column examples did not fit an 80-column terminal. The root's list
#   is closed after its own options and each subcommand gets a subsection of a COMMANDS
#   section, at the page's normal 5-column indent.
# - The plugin ends the page with an EXIT STATUS of `.Ex -std` (0 or >0) only. It is
#   replaced by docs/man/sections.mdoc (ENVIRONMENT, FILES, EXIT STATUS with every code
#   of docs/errors.md, SEE ALSO), written by hand: `make man` passes its path as `sections`.
#
# Everything else passes through unchanged.

function flush(    i) {
    if (n >= 2) {
        print ".Bd -literal"
        for (i = 1; i <= n; i++) print (text[i] == "" ? "\\&" : text[i])
        print ".Ed"
    } else if (n == 1) {
        print text[1]
    }
    n = 0
}

# A text line (not a macro): part of the current run.
!/^[.']/ { text[++n] = $0; next }

{ flush() }

# The plugin's EXIT STATUS (`.Ex -std` follows it): the hand-written sections instead.
/^\.Sh "EXIT STATUS"/ {
    while ((getline line < sections) > 0) print line
    close(sections)
    skip = 1
    next
}
skip && /^\.Ex / { next }

/^\.Bl / { depth++; print; next }

/^\.El/ {
    depth--
    # The root list's own end, when it was already closed before the first subcommand.
    if (depth == 0 && closed) next
    print
    next
}

# A subcommand: an item of the root list.
/^\.It Em / && depth == 1 {
    if (!closed) { print ".El"; print ".Sh COMMANDS"; closed = 1 }
    name = $0
    sub(/^\.It Em /, "", name)
    print ".Ss kc " name
    next
}

{ print }

END { flush() }
