; entry.asm - first kernel instructions. The loader jumps here with RDI = the
; physical address of struct boot_info, interrupts off, on its own page tables
; and (possibly boot-services) stack. We take the TSC for boot timing, clear
; .bss, move to our own stack and call kernel_main(boot_info_phys).

bits 64
default rel

extern kernel_main
extern __bss_start
extern __bss_end
extern __boot_stack_top

global kernel_entry:function
global kernel_entry_tsc:data

section .data
align 8
kernel_entry_tsc: dq 0

section .text.entry
kernel_entry:
    cli
    cld
    mov r12, rdi                ; boot_info physical address (callee-saved)
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov r13, rax                ; entry TSC, stored once .bss is clear

    ; Zero .bss (includes our stack; we are not on it yet).
    lea rdi, [__bss_start]
    lea rcx, [__bss_end]
    sub rcx, rdi
    xor eax, eax
    rep stosb

    mov [kernel_entry_tsc], r13
    lea rsp, [__boot_stack_top]
    xor ebp, ebp                ; end of the frame-pointer chain for stack traces
    mov rdi, r12
    call kernel_main
.halt:
    cli
    hlt
    jmp .halt

section .note.GNU-stack noalloc noexec nowrite progbits
