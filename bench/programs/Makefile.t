# bench/programs.py: a make run with a dependency between two files.
all: a.txt b.txt
a.txt: ; @echo a > a.txt
b.txt: a.txt ; @cat a.txt a.txt > b.txt; wc -l < b.txt
