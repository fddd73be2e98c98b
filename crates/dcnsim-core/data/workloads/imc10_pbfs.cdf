# imc10_pbfs: imc10 (Benson IMC10, pFabric/pHost "aditya", in packets) in the 1000-byte packets of the PB-FS evaluation (the HPCC authors' ns-3, PACKET_PAYLOAD_SIZE 1000): imc10 sizes x 1000/1460, half of all flows one 1000-byte packet; sampling=linear; mean_bytes=133806.2
1000 0
1000 0.5
2000 0.6
3000 0.7
5000 0.75
7000 0.8
40000 0.8125
72000 0.825
137000 0.85
267000 0.9
1187000 0.95
2107000 1
