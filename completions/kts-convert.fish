complete -c kts-convert -l root -d 'Scope root for records that do not name one (paths are relative to it)' -r -F
complete -c kts-convert -s j -l threads -d 'Worker threads [default: the number of cores]' -r
complete -c kts-convert -l timeout -d 'Give up on a document after this many seconds' -r
complete -c kts-convert -l max-unpacked-mib -d 'Largest total a zip package (docx, pptx, xlsx, ods, odt, odp, epub) may decompress to, and the attachments of one e-mail file may add up to, in MiB' -r
complete -c kts-convert -l max-pages -d 'Refuse PDFs with more pages than this' -r
complete -c kts-convert -l max-cells -d 'Read at most this many non-empty cells of a workbook; the rest is left out with a warning' -r
complete -c kts-convert -l no-store -d 'Do not write ROOT/.kts/documents (and do not reuse earlier conversions)'
complete -c kts-convert -l fail-fast -d 'Stop at the first document that fails'
complete -c kts-convert -l stats -d 'Print a one-line summary on stderr at the end'
complete -c kts-convert -s q -l quiet -d 'Do not print per-record errors and warnings (the exit status still tells)'
complete -c kts-convert -s h -l help -d 'Print help'
complete -c kts-convert -s V -l version -d 'Print version'
