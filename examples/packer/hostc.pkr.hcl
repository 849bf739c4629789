# Bake hostc's tuning into an image (Packer 1.6.6, HCL2: no `packer init`, no
# required_plugins).  Two builds (a chroot builder, mkosi or debootstrap installs the
# same tree offline instead: `DESTDIR=IMAGE sh apply.sh`, README.md):
#
#   rootfs  runs offline (null source, communicator none): `hostc build` makes the
#           tree and its apply.sh under var.out/rootfs/.  Run it first, in CI too:
#             packer build -only=rootfs.null.offline .
#   image   carries that tree into a machine and applies it.  source.null.image
#           stands in for your image builder (amazon-ebs, qemu, ...): replace it,
#           keep the provisioners.  `packer validate .` checks both builds, and
#           stats var.out/rootfs/, so run the rootfs build (or hostc) before it.
#
# The apply steps come from hostc (apply.sh, made for the host's OS family from
# the files' own activation data); nothing here hard-codes them.

variable "spec" {
  type        = string
  default     = "../h100-4gpu-inference/node.toml"
  description = "the host spec (node.toml) to compile"
}

variable "out" {
  type        = string
  default     = "build"
  description = "hostc writes the tree to <out>/rootfs/"
}

variable "hostc" {
  type        = string
  default     = "hostc"
  description = "how to run hostc, e.g. `python3 -m hostc`"
}

variable "ssh_host" {
  type        = string
  default     = "127.0.0.1"
  description = "image build only: the machine being baked (your builder sets this itself)"
}

variable "ssh_username" {
  type    = string
  default = "packer"
}

source "null" "offline" {
  communicator = "none"
}

source "null" "image" {
  communicator   = "ssh"
  ssh_host       = var.ssh_host
  ssh_username   = var.ssh_username
  ssh_agent_auth = true
}

build {
  name    = "rootfs"
  sources = ["source.null.offline"]

  provisioner "shell-local" {
    inline = ["${var.hostc} build '${var.spec}' --target rootfs --out '${var.out}' -q"]
  }
}

build {
  name    = "image"
  sources = ["source.null.image"]

  # the same tree, fresh for this build (-q: hostc's summary goes to stderr, which
  # Packer shows as an error)
  provisioner "shell-local" {
    inline = ["${var.hostc} build '${var.spec}' --target rootfs --out '${var.out}' -q"]
  }

  # a trailing / uploads the directory's contents; the SSH user can write /tmp
  provisioner "file" {
    source      = "${var.out}/rootfs/"
    destination = "/tmp/hostc-rootfs"
  }

  # installs every file as root:root with hostc's modes, then runs the apply steps
  provisioner "shell" {
    inline = ["sudo sh /tmp/hostc-rootfs/apply.sh", "rm -rf /tmp/hostc-rootfs"]
  }
}
