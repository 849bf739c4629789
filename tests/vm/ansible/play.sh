#!/bin/sh
# ansible-playbook on the host itself (-c local, as root: no become), from the host
# venv's ansible-core unpacked at /opt/ansible-lib (no network, no pip in the guest).
export PYTHONPATH=/opt/ansible-lib HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8
export ANSIBLE_HOME=/root/.ansible ANSIBLE_LOCAL_TEMP=/root/.ansible/tmp
export ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_FORCE_COLOR=0
exec python3 -c 'import sys; from ansible.cli.playbook import main; sys.argv[0] = "ansible-playbook"; main()' \
    -i vmtest, -c local -e ansible_python_interpreter=/usr/bin/python3 \
    -e hostc_become=false /root/vmtest/build/ansible/playbook.yml "$@"
