; isr.asm - interrupt entry stubs. Every vector gets a stub that pushes an
; error code (a zero where the CPU pushes none) and the vector number, then
; the common path saves all general registers and the SSE state, calls
; interrupt_dispatch(struct interrupt_frame *) and returns with iretq.
; The frame layout must match struct interrupt_frame in kernel/arch/idt.h.

bits 64
default rel

extern interrupt_dispatch
global isr_stub_table:data

section .text

; Vectors where the CPU pushes an error code.
%define HAS_ERROR(v) ((v) == 8 || (v) == 10 || (v) == 11 || (v) == 12 || (v) == 13 || (v) == 14 || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

%assign vec 0
%rep 256
isr_stub_ %+ vec:
%if HAS_ERROR(vec) == 0
    push qword 0
%endif
    push qword vec
    jmp isr_common
%assign vec vec + 1
%endrep

isr_common:
    push rax
    push rbx
    push rcx
    push rdx
    push rsi
    push rdi
    push rbp
    push r8
    push r9
    push r10
    push r11
    push r12
    push r13
    push r14
    push r15
    cld
    mov rdi, rsp                ; struct interrupt_frame *
    mov rbx, rsp                ; callee-saved: the frame, to restore rsp
    sub rsp, 512
    and rsp, -64
    fxsave [rsp]                ; C code uses SSE; keep the interrupted state
    call interrupt_dispatch
    fxrstor [rsp]
    mov rsp, rbx
    pop r15
    pop r14
    pop r13
    pop r12
    pop r11
    pop r10
    pop r9
    pop r8
    pop rbp
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rbx
    pop rax
    add rsp, 16                 ; vector and error code
    iretq

section .rodata
align 8
isr_stub_table:
%assign vec 0
%rep 256
    dq isr_stub_ %+ vec
%assign vec vec + 1
%endrep

section .note.GNU-stack noalloc noexec nowrite progbits
