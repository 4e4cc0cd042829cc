# make bench: the two plots, from the .dat files bench/report.py writes.
# gnuplot -e "out='bench/out'" bench/plots.gp
if (!exists("out")) out = "bench/out"

set terminal pngcairo size 1000,420 font "sans,10"
set grid
set key bottom left

# Ratio to VM (K page sequences) by object size, prot1 and protN.
set output out."/ratio_vs_size.png"
set multiplot layout 1,2 title "Cost per object relative to page protection (VM), same run; below 1 = cheaper than VM"
set logscale xy 2
set xlabel "object size (bytes)"
set ylabel "time / VM time"
set xtics ("64 B" 64, "4 KiB" 4096, "64 KiB" 65536, "256 KiB" 262144)
set xrange [40:400000]
set yrange [0.005:2]
set title "prot1"
plot out."/ratio_prot1.dat" using 1:2 with linespoints lw 2 title "RT-basic", \
     "" using 1:3 with linespoints lw 2 dt 2 title "RT-update", \
     "" using 1:4 with linespoints lw 2 title "MultiView alias", \
     1 with lines lc "black" dt 3 title "VM"
set title "protN (N = 100)"
plot out."/ratio_protN.dat" using 1:2 with linespoints lw 2 title "RT-basic", \
     "" using 1:3 with linespoints lw 2 dt 2 title "RT-update", \
     "" using 1:4 with linespoints lw 2 title "MultiView alias", \
     1 with lines lc "black" dt 3 title "VM"
unset multiplot

# Region lookup by number of regions.
set terminal pngcairo size 640,420 font "sans,10"
set output out."/lookup_vs_regions.png"
unset logscale
set logscale x 10
set logscale y 10
unset xtics
set xtics
set xrange [500:2000000]
set format x "10^{%L}"
set title "rtl region lookup (random regions of 64 B), median"
set xlabel "regions"
set ylabel "ns per lookup"
set yrange [5:1000]
chase = real(system("cat ".out."/chase.dat"))
plot out."/lookup.dat" using 1:2 with linespoints lw 2 title "independent lookups", \
     "" using 1:4 with linespoints lw 2 title "dependent lookups (latency)", \
     100 with lines lc "red" dt 2 title "target at 10^6: 100 ns", \
     chase with lines lc "black" dt 3 title "one memory miss (chase over 128 MiB)"
