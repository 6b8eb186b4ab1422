/*
 * cfiedge.S - frames whose CFI is correct but unusual, each spinning
 * rdi times (cfiedge.c calls them):
 *
 * ra_in_reg: pops its return address into %rsi (DW_CFA_register, as
 *   glibc's vfork does): the caller's sp equals the leaf's.
 * rbx_cfa: realigns the stack and keeps its CFA in %rbx around a call
 *   to a C leaf whose CFI never mentions %rbx (the psABI says %rbx is
 *   callee-saved; elfutils' ABI defaults say undefined).
 * fp_caller, popped_epilogue: the first keeps its CFA in %rbp; the second
 *   pops %rbp and spins with the save rule still in place, as GCC's
 *   epilogues leave it: the saved slot is below the stack pointer.
 * syscall_end: a system call is the last instruction its FDE covers, so
 *   a sample taken in the kernel has a user pc past the FDE.
 */
	.text

	.globl	ra_in_reg
	.type	ra_in_reg, @function
ra_in_reg:
	.cfi_startproc
	pop	%rsi
	.cfi_adjust_cfa_offset -8
	.cfi_register %rip, %rsi
1:	dec	%rdi
	jnz	1b
	push	%rsi
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rip, -8
	ret
	.cfi_endproc
	.size	ra_in_reg, . - ra_in_reg

	.globl	rbx_cfa
	.type	rbx_cfa, @function
rbx_cfa:
	.cfi_startproc
	push	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -16
	mov	%rsp, %rbx
	.cfi_def_cfa_register %rbx
	and	$-64, %rsp
	call	spin_leaf
	mov	%rbx, %rsp
	.cfi_def_cfa_register %rsp
	pop	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbx
	ret
	.cfi_endproc
	.size	rbx_cfa, . - rbx_cfa

	.globl	fp_caller
	.type	fp_caller, @function
fp_caller:
	.cfi_startproc
	push	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbp, -16
	mov	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	and	$-64, %rsp
	sub	$24, %rsp
	call	popped_epilogue
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	fp_caller, . - fp_caller

	.globl	popped_epilogue
	.type	popped_epilogue, @function
popped_epilogue:
	.cfi_startproc
	push	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbp, -16
	mov	$7, %ebp
	pop	%rbp
	.cfi_adjust_cfa_offset -8
1:	dec	%rdi
	jnz	1b
	ret
	.cfi_endproc
	.size	popped_epilogue, . - popped_epilogue

	.globl	syscall_end
	.type	syscall_end, @function
syscall_end:
	.cfi_startproc
	mov	$110, %eax		/* getppid */
	syscall
	.cfi_endproc
	ret
	.size	syscall_end, . - syscall_end

	.section .note.GNU-stack, "", @progbits
