complete -c kts-convert -l root -d 'Scope root for records that do not name one (paths are relative to it)' -r -F
complete -c kts-convert -s j -l threads -d 'Worker threads, 1 or more [default: the number of cores]' -r
complete -c kts-convert -l timeout -d 'Give up on a document after this many seconds, 1 to 86400 (OCR included: raise it for long scans)' -r
complete -c kts-convert -l max-markdown-mib -d 'Refuse a document whose Markdown would pass this many MiB, 1 or more (a text file that large is refused before it is read): the later stages hold a document whole' -r
complete -c kts-convert -l max-unpacked-mib -d 'Largest total a zip package (docx, pptx, xlsx, ods, odt, odp, epub) may decompress to, and the attachments of one e-mail file may add up to, in MiB, 1 or more' -r
complete -c kts-convert -l max-pages -d 'Refuse PDFs with more pages than this (1 or more)' -r
complete -c kts-convert -l max-cells -d 'Read at most this many non-empty cells of a workbook, 1 or more; the rest is left out with a warning' -r
complete -c kts-convert -l ocr -d 'Which pages to read with OCR: auto (images, PDF pages without text, and scans with fewer than 20 words of text), always (every PDF page too), never' -r -f -a "auto\t'Images, PDF pages without a text layer, and scanned pages with a few words of text on them'
always\t'Images, and every PDF page (its text layer is replaced)'
never\t'Nothing: images and pages without a text layer stay empty'"
complete -c kts-convert -l ocr-languages -d 'Tesseract\'s languages for OCR, joined by \'+\' (each needs its tesseract-ocr-LANG package)' -r
complete -c kts-convert -l ocr-timeout -d 'Give up on a page (rendering or OCR) after this many seconds, 1 to 86400' -r
complete -c kts-convert -l max-megapixels -d 'Refuse images larger than this many megapixels, 1 or more, before decoding them (and re-encode an image of a PDF as PNG only if its pixels × colour components stay within it)' -r
complete -c kts-convert -l tesseract -d 'The tesseract program' -r
complete -c kts-convert -l pdftoppm -d 'The pdftoppm program (poppler-utils)' -r
complete -c kts-convert -l describe-images -d 'Describe each image with this shell command: it gets the image\'s path as its last argument and prints a description, which becomes the image\'s alt text' -r
complete -c kts-convert -l describe-timeout -d 'Give up on describing an image after this many seconds, 1 to 86400' -r
complete -c kts-convert -l no-store -d 'Do not write ROOT/.kts/documents (and do not reuse earlier conversions)'
complete -c kts-convert -l fail-fast -d 'Stop at the first document that fails'
complete -c kts-convert -l stats -d 'Print a one-line summary on stderr at the end'
complete -c kts-convert -s q -l quiet -d 'Do not print per-record errors and warnings (the exit status still tells)'
complete -c kts-convert -s h -l help -d 'Print help (see more with \'--help\')'
complete -c kts-convert -s V -l version -d 'Print version'
