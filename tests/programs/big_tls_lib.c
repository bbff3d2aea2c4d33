/* A library with 48 KiB of initial-exec TLS (as rustc's driver library
 * has 23 KiB): the loader must place it in the static TLS block. */
__attribute__((tls_model("initial-exec"))) __thread unsigned char big_tls[48 << 10];

unsigned big_tls_sum(unsigned char seed)
{
    unsigned sum = 0;
    for (unsigned i = 0; i < sizeof big_tls; i++)
        big_tls[i] = (unsigned char)(seed + i);
    for (unsigned i = 0; i < sizeof big_tls; i += 4096)
        sum += big_tls[i];
    return sum;
}
