; smp_trampoline.asm - where an application processor starts after SIPI.
; smp.c copies [smp_trampoline_start, smp_trampoline_end) to a page below
; 1 MiB and patches the data fields at the end (offsets exported as
; smp_trampoline_*_offset). Real mode goes straight to long mode: PAE,
; CR3 = a small low table set (identity map of the first 2 MiB plus the
; kernel's upper-half entries), EFER.LME|NXE, then CR0.PE|PG at once and a
; far jump into a 64-bit code segment. From there we jump to ap_entry64 in
; the kernel image, which switches to the kernel's own CR3, takes a ticket
; for its stack and calls ap_main(ticket).

bits 16
default abs

global smp_trampoline_start:data
global smp_trampoline_end:data
global smp_trampoline_gdtr_offset:data
global smp_trampoline_farjump_offset:data
global smp_trampoline_long_mode_offset:data
global smp_trampoline_data_offset:data
global ap_entry64:function
global ap_ticket:data
global ap_stack_tops:data
extern ap_main

%define OFF(label) ((label) - smp_trampoline_start)

section .rodata
align 16
smp_trampoline_start:
    cli
    cld
    mov ax, cs
    mov ds, ax
    xor ebx, ebx
    mov bx, ax
    shl ebx, 4                          ; physical base of this page, kept in ebx
    lgdt [OFF(tr_gdtr)]
    mov eax, [OFF(tr_cr4)]
    mov cr4, eax
    mov eax, [OFF(tr_low_cr3)]
    mov cr3, eax
    mov ecx, 0xC0000080                 ; EFER
    mov eax, [OFF(tr_efer)]
    xor edx, edx
    wrmsr
    mov eax, [OFF(tr_cr0)]
    mov cr0, eax                        ; PE|PG: long mode (compatibility) now
tr_farjump:
    db 0x66, 0xEA                       ; jmp far dword 0x08:long_mode (patched)
    dd 0
    dw 0x08

bits 64
tr_long_mode:
    mov ebx, ebx                        ; upper halves are undefined after the switch
    mov rax, [rbx + OFF(tr_kernel_cr3)]
    mov rcx, [rbx + OFF(tr_entry)]
    jmp rcx

align 16
tr_data:
tr_gdt:
    dq 0
    dq 0x00209A0000000000               ; 0x08: 64-bit code
    dq 0x0000920000000000               ; 0x10: data
tr_gdtr:
    dw 3 * 8 - 1
    dd 0                                ; physical address of tr_gdt (patched)
    dw 0
tr_cr4:        dd 0
tr_low_cr3:    dd 0
tr_efer:       dd 0
tr_cr0:        dd 0
tr_kernel_cr3: dq 0
tr_entry:      dq 0
smp_trampoline_end:

align 8
smp_trampoline_gdtr_offset:      dq OFF(tr_gdtr)
smp_trampoline_farjump_offset:   dq OFF(tr_farjump)
smp_trampoline_long_mode_offset: dq OFF(tr_long_mode)
smp_trampoline_data_offset:      dq OFF(tr_data)

section .bss
align 8
ap_ticket:     resq 1
ap_stack_tops: resq 64

section .text
bits 64
; RAX = the kernel's CR3. Still on the low tables, which map this code too.
ap_entry64:
    mov cr3, rax
    mov eax, 1
    lock xadd [rel ap_ticket], rax
    lea rcx, [rel ap_stack_tops]
    mov rsp, [rcx + rax * 8]
    xor ebp, ebp                        ; end of the frame-pointer chain
    mov rdi, rax
    call ap_main
.halt:
    cli
    hlt
    jmp .halt

section .note.GNU-stack noalloc noexec nowrite progbits
