/*
 * lk_hazards.c - a program whose code hides its ways in (with
 * lk_hazards_asm.S): a computed-goto interpreter (its label table in
 * data), a cold piece entered only by a computed jump that jumps into the
 * middle of a hot pair, a jump table with a hidden base and cases that
 * fall into each other, a table kept in .text, and instructions entered
 * where no analysis sees a way in, under the bytes a jump over the load
 * before them takes.  It prints what it
 * computed: a rewritten copy must print the same.  Built as is and
 * stripped (lk_hazards_stripped).
 */
#include <stdio.h>

long hot_cold(long *p, long n);
long dispatch(const long *p, long op);
long text_table_sum(void);
long hidden_entries(long *p, long n);

/* acc and mem[] through a computed goto per opcode: 0 load, 1 store,
 * 2 add immediate, 3 halt; operands one byte each. */
static long interpret(const unsigned char *code, long *mem)
{
    static void *const ops[] = { &&op_load, &&op_store, &&op_add, &&op_halt };
    long acc = 0;
    unsigned pc = 0;
    goto *ops[code[pc]];
op_load:
    acc += mem[code[pc + 1]];
    pc += 2;
    goto *ops[code[pc]];
op_store:
    mem[code[pc + 1]] = acc;
    pc += 2;
    goto *ops[code[pc]];
op_add:
    acc += code[pc + 1];
    pc += 2;
    goto *ops[code[pc]];
op_halt:
    return acc;
}

int main(void)
{
    static long cells[3] = { 0, 5, 0 };
    long sum = hot_cold(cells, 1000);
    printf("hot_cold: %ld %ld %ld %ld\n", sum, cells[0], cells[1], cells[2]);
    static const long p[4] = { 1, 10, 100, 1000 };
    for (long op = 0; op < 4; op++)
        printf("dispatch(%ld): %ld\n", op, dispatch(p, op));
    printf("text table: %ld\n", text_table_sum());
    static long loads[3] = { 3, 40, 500 };
    printf("hidden entries: %ld\n", hidden_entries(loads, 1000));
    static const unsigned char prog[] = { 2, 7, 1, 0, 0, 0, 2, 3, 1, 1, 0, 1,
                                          3 };
    long mem[2] = { 0, 0 };
    long r = 0;
    for (int i = 0; i < 50; i++)
        r += interpret(prog, mem);
    printf("interpret: %ld %ld %ld\n", r, mem[0], mem[1]);
    return 0;
}
