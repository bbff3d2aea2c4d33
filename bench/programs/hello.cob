      * bench/programs.py: 1..100 summed, in COBOL (cobc).
       IDENTIFICATION DIVISION.
       PROGRAM-ID. HELLO.
       DATA DIVISION.
       WORKING-STORAGE SECTION.
       01 I PIC 9(4) VALUE 0.
       01 S PIC 9(8) VALUE 0.
       PROCEDURE DIVISION.
           PERFORM VARYING I FROM 1 BY 1 UNTIL I > 100
               ADD I TO S
           END-PERFORM.
           DISPLAY S.
           STOP RUN.
