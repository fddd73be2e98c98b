# fb_webserver_ndp: Facebook web server (Roy SIGCOMM15 Fig. 6a) as the NDP authors' simulator draws it for the paper's Fig. 23: ten sizes, each with probability 1/10 (its deciles); source nets-cs-pub-ro/NDP:sim/ndp_transfer.cpp CDF_WEB; sampling=step; mean_bytes=112225.0
250 0.1
500 0.2
1000 0.3
1500 0.4
2000 0.5
3000 0.6
4000 0.7
10000 0.8
100000 0.9
1000000 1.0
